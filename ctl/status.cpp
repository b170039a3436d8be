// trimctl status [MOUNT...]: a table of the tracked filesystems, fitted
// to the terminal, or JSON.
#include <algorithm>
#include <cstdio>

#include "commands.hpp"
#include "format.hpp"
#include "json.hpp"
#include "pager.hpp"
#include "report.hpp"
#include "table.hpp"
#include "terminal_text.hpp"
#include "units.hpp"

namespace trimctl {

namespace {

// The named filesystems in the order given, or all when none are named.
std::vector<FilesystemInfo> select_filesystems(std::vector<FilesystemInfo> all,
                                               const std::vector<std::string>& arguments) {
  if (arguments.empty()) return all;
  std::vector<FilesystemInfo> selected;
  for (const auto& mount_point : absolute_mount_points(arguments)) {
    const auto it = std::find_if(all.begin(), all.end(),
                                 [&](const auto& fs) { return fs.mount_point == mount_point; });
    if (it == all.end())
      throw Failure(mount_point + " is not a filesystem trimd tracks (see 'trimctl status')");
    selected.push_back(*it);
  }
  return selected;
}

// Mount points lose their middle, devices their "/dev/..." start, results
// their end; the mount point, which names the row, gives up cells last.
const std::vector<Column>& status_columns() {
  static const std::vector<Column> kColumns{{"MOUNT", Ellipsize::Middle, 12, 1},
                                            {"TYPE"},
                                            {"DEVICE", Ellipsize::Start, 10},
                                            {"STATE"},
                                            {"LAST TRIM"},
                                            {"RESULT", Ellipsize::End, 7},
                                            {"NEXT TRIM"},
                                            {"TRIMMED"}};
  return kColumns;
}

Color state_color(const std::string& state) {
  if (state == "trimming") return Color::Green;
  if (state == "paused") return Color::Yellow;
  return Color::None;
}

// "Tue 2026-12-01 09:00 UTC; 1h 57min left", compact "2h left".
Cell time_cell(uint64_t usec, uint64_t now, const char* none) {
  if (usec == 0) return {none};
  return {format_timestamp_and_relative(usec, now, none), format_relative(usec, now, true)};
}

std::vector<Cell> status_row(const FilesystemInfo& fs, uint64_t now) {
  const bool ever_trimmed = fs.last_trim_end != 0;
  // A pass under way shows how far it got beside its state: "trimming 42%".
  const std::string state =
      pass_under_way(fs) ? fs.state + " " + format_percent(fs.progress) : fs.state;
  return {{fs.mount_point},
          {fs.fs_type},
          {fs.device},
          {state, "", state_color(fs.state)},
          time_cell(fs.last_trim_end, now, "never"),
          {fs.last_result.empty() ? "-" : fs.last_result, "", result_color(fs.last_result)},
          time_cell(fs.next_trim, now, "-"),
          {ever_trimmed ? trimd::format_size(fs.last_bytes_trimmed) : "-"}};
}

struct Note {
  std::string text;
  Color color = Color::None;
};

// What a person should know beyond the table: why a filesystem waits, and
// mounts that pay for inline discard.
std::vector<Note> status_notes(const std::vector<FilesystemInfo>& filesystems, bool named) {
  std::vector<Note> notes;
  // Named filesystems: what trimd did to each over its lifetime.
  if (named)
    for (const auto& fs : filesystems)
      notes.push_back({fs.mount_point + ": " + lifetime_text(lifetime_of(fs))});
  for (const auto& fs : filesystems)
    if (!fs.state_reason.empty())
      notes.push_back({fs.mount_point + ": " + fs.state + ": " + fs.state_reason});
  for (const auto& fs : filesystems)
    if (warn_about_inline_discard(fs))
      notes.push_back({inline_discard_warning(fs.mount_point), Color::Yellow});
  for (const auto& fs : filesystems)
    if (const auto note = takeover_note(fs); !note.empty()) notes.push_back({note});
  return notes;
}

// Each note wrapped to the table's width.
std::string render_notes(const std::vector<Note>& notes, const TableStyle& style) {
  std::string out;
  for (const auto& note : notes)
    out += text_paragraph(note.text, style.full ? 0 : style.width, 2, note.color, style.colors);
  return out;
}

void print_status_text(const ManagerInfo& manager, const std::vector<FilesystemInfo>& filesystems,
                       const Options& options) {
  const bool legend = options.legend;
  const TableStyle style{options.terminal.columns, options.full, legend, options.terminal.colors};
  // Lifetime figures span restarts; wrapped to the table's width.
  if (legend)
    std::printf("%s", render_notes({{"trimd " + manager.version + ": " + manager.state + "; " +
                                     lifetime_text(lifetime_of(manager))}},
                                   style)
                          .c_str());
  if (filesystems.empty()) {
    if (legend) std::printf("\nNo filesystems tracked.\n");
    return;
  }
  const uint64_t now = realtime_now_usec();
  std::vector<std::vector<Cell>> rows;
  for (const auto& fs : filesystems) rows.push_back(status_row(fs, now));
  std::printf("%s%s", legend ? "\n" : "", render_table(status_columns(), rows, style).c_str());
  // The notes are legend too: with --no-legend a script gets the rows only.
  const std::string notes =
      legend ? render_notes(status_notes(filesystems, !options.arguments.empty()), style) : "";
  if (!notes.empty()) std::printf("\n%s", notes.c_str());
}

void print_status_json(const ManagerInfo& manager, const std::vector<FilesystemInfo>& filesystems,
                       JsonMode mode) {
  Json objects = Json::array();
  for (const auto& fs : filesystems) objects.push_back(filesystem_json(fs));
  const Json document{{"manager", manager_json(manager)}, {"filesystems", objects}};
  std::printf("%s\n", json_text(document, mode).c_str());
}

}  // namespace

int status_command(Client& client, const Options& options) {
  const ManagerInfo manager = client.manager();
  const auto filesystems = select_filesystems(client.filesystems(), options.arguments);
  if (options.quiet) return kExitOk;
  const auto pager = start_pager(options.terminal.tty, options.pager);
  if (options.json_output())
    print_status_json(manager, filesystems, options.json);
  else
    print_status_text(manager, filesystems, options);
  return kExitOk;
}

}  // namespace trimctl
