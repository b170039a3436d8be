// trimctl history [MOUNT]: the passes trimd remembers (the last ten per
// filesystem, from its state file), as a table or JSON.
#include <cstdio>

#include "commands.hpp"
#include "units.hpp"
#include "format.hpp"
#include "json.hpp"
#include "pager.hpp"
#include "report.hpp"
#include "table.hpp"

namespace trimctl {

namespace {

// Mount points lose their middle and results their end when it is narrow;
// start times fall back to their age.
const std::vector<Column>& history_columns() {
  static const std::vector<Column> kColumns{
      {"MOUNT", Ellipsize::Middle, 12, 1}, {"STARTED"}, {"TRIMMING"}, {"WAITED"},
      {"TRIMMED"},                        {"PREEMPTED"}, {"RESULT", Ellipsize::End, 7}};
  return kColumns;
}

Color result_color(const std::string& result) {
  if (result == "success") return Color::Green;
  return result.rfind("failed", 0) == 0 ? Color::Red : Color::Yellow;
}

std::vector<Cell> history_row(const PassInfo& pass, uint64_t now) {
  return {{pass.mount_point},
          {format_timestamp(pass.start), format_relative(pass.start, now, true)},
          {format_duration(pass.trim_usec)},
          {format_duration(pass.wait_usec)},
          {trimd::format_size(pass.bytes)},
          {std::to_string(pass.preemptions)},
          {pass.result, "", result_color(pass.result)}};
}

std::string pass_json(const PassInfo& pass) {
  return JsonObject()
      .string("mount_point", pass.mount_point)
      .number("start_usec", pass.start)
      .number("end_usec", pass.end)
      .number("trim_usec", pass.trim_usec)
      .number("wait_usec", pass.wait_usec)
      .number("bytes_trimmed", pass.bytes)
      .string("result", pass.result)
      .number("preemptions", static_cast<uint64_t>(pass.preemptions))
      .str();
}

void print_history_text(const std::vector<PassInfo>& passes, const Options& options) {
  if (passes.empty()) {
    if (options.legend) std::printf("No passes remembered.\n");
    return;
  }
  const uint64_t now = realtime_now_usec();
  std::vector<std::vector<Cell>> rows;
  for (const auto& pass : passes) rows.push_back(history_row(pass, now));
  const TableStyle style{options.terminal.columns, options.full, options.legend,
                         options.terminal.colors};
  std::printf("%s", render_table(history_columns(), rows, style).c_str());
}

}  // namespace

int history_command(Client& client, const Options& options) {
  const std::string mount_point =
      options.arguments.empty() ? std::string() : absolute_mount_point(options.arguments.front());
  const auto passes = client.history(mount_point);
  if (options.quiet) return kExitOk;
  const auto pager = start_pager(options.terminal.tty, options.pager);
  if (options.json_output()) {
    std::vector<std::string> objects;
    for (const auto& pass : passes) objects.push_back(pass_json(pass));
    const std::string document = JsonObject().raw("history", json_array(objects)).str();
    std::printf("%s\n", json_for(document, options.json).c_str());
  } else {
    print_history_text(passes, options);
  }
  return kExitOk;
}

}  // namespace trimctl
