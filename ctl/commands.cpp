// status, and the commands that are one method call each.
#include "commands.hpp"

#include <algorithm>
#include <cstdio>

#include "format.hpp"
#include "json.hpp"
#include "report.hpp"

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

std::vector<std::string> status_row(const FilesystemInfo& fs, uint64_t now) {
  const bool ever_trimmed = fs.last_trim_end != 0;
  return {fs.mount_point,
          fs.fs_type,
          fs.device,
          fs.state,
          pass_under_way(fs) ? format_percent(fs.progress) : "-",
          format_timestamp_and_relative(fs.last_trim_end, now, "never"),
          fs.last_result.empty() ? "-" : fs.last_result,
          format_timestamp_and_relative(fs.next_trim, now, "-"),
          ever_trimmed ? format_bytes(fs.last_bytes_trimmed) : "-"};
}

void print_status_text(const ManagerInfo& manager, const std::vector<FilesystemInfo>& filesystems) {
  std::printf("trimd %s: %s, %s trimmed since it started\n", manager.version.c_str(),
              manager.state.c_str(), format_bytes(manager.bytes_trimmed_total).c_str());
  if (filesystems.empty()) {
    std::printf("\nNo filesystems tracked.\n");
    return;
  }
  const uint64_t now = realtime_now_usec();
  std::vector<std::vector<std::string>> rows;
  for (const auto& fs : filesystems) rows.push_back(status_row(fs, now));
  std::printf("\n%s", render_table({"MOUNT", "TYPE", "DEVICE", "STATE", "PROGRESS", "LAST TRIM",
                                    "RESULT", "NEXT TRIM", "TRIMMED"},
                                   rows)
                          .c_str());
  std::string notes;
  for (const auto& fs : filesystems)
    if (!fs.state_reason.empty()) notes += fs.mount_point + ": " + fs.state + ": " + fs.state_reason + "\n";
  for (const auto& fs : filesystems)
    if (warn_about_inline_discard(fs)) notes += inline_discard_warning(fs.mount_point) + "\n";
  for (const auto& fs : filesystems)
    if (const auto note = takeover_note(fs); !note.empty()) notes += note + "\n";
  if (!notes.empty()) std::printf("\n%s", notes.c_str());
}

void print_status_json(const ManagerInfo& manager, const std::vector<FilesystemInfo>& filesystems) {
  std::vector<std::string> objects;
  for (const auto& fs : filesystems) objects.push_back(filesystem_json(fs));
  std::printf("%s\n", JsonObject()
                          .raw("manager", manager_json(manager))
                          .raw("filesystems", json_array(objects))
                          .str()
                          .c_str());
}

}  // namespace

int status_command(Client& client, const Options& options) {
  const ManagerInfo manager = client.manager();
  const auto filesystems = select_filesystems(client.filesystems(), options.arguments);
  if (options.json)
    print_status_json(manager, filesystems);
  else
    print_status_text(manager, filesystems);
  return kExitOk;
}

int pause_command(Client& client, const Options& options) {
  client.pause(absolute_mount_points(options.arguments));
  return kExitOk;
}

int resume_command(Client& client, const Options& options) {
  client.resume(absolute_mount_points(options.arguments));
  return kExitOk;
}

int cancel_command(Client& client, const Options& options) {
  client.cancel(absolute_mount_points(options.arguments));
  return kExitOk;
}

int reload_command(Client& client, const Options& /*options*/) {
  client.reload();
  return kExitOk;
}

void validate_notify_freed(const Options& options) {
  if (!parse_bytes(options.arguments.at(1)))
    throw UsageError("'" + options.arguments[1] + "' is not a size (say e.g. 50GiB, 1.5T or 4096)");
}

int notify_freed_command(Client& client, const Options& options) {
  client.notify_freed(absolute_mount_point(options.arguments.at(0)),
                      *parse_bytes(options.arguments.at(1)));
  return kExitOk;
}

}  // namespace trimctl
