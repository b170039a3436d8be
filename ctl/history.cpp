// trimctl history [MOUNT]: the passes trimd remembers (the last ten per
// filesystem, from its state file), as a table or JSON.
#include <cstdio>

#include "commands.hpp"
#include "format.hpp"
#include "json.hpp"
#include "pager.hpp"
#include "report.hpp"
#include "table.hpp"
#include "units.hpp"

namespace trimctl {

namespace {

// Mount points lose their middle and results their end when it is narrow;
// start times fall back to their age.
const std::vector<Column>& history_columns() {
  static const std::vector<Column> kColumns{{"MOUNT", Ellipsize::Middle, 12, 1},
                                            {"STARTED"},
                                            {"TRIMMING"},
                                            {"WAITED"},
                                            {"TRIMMED"},
                                            {"PREEMPTED"},
                                            {"RESULT", Ellipsize::End, 7}};
  return kColumns;
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

Json pass_json(const PassInfo& pass) {
  return {{"mount_point", pass.mount_point},
          {"start_usec", pass.start},
          {"end_usec", pass.end},
          {"trim_usec", pass.trim_usec},
          {"wait_usec", pass.wait_usec},
          {"bytes_trimmed", pass.bytes},
          {"result", pass.result},
          {"preemptions", static_cast<uint64_t>(pass.preemptions)}};
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
    Json history = Json::array();
    for (const auto& pass : passes) history.push_back(pass_json(pass));
    std::printf("%s\n", json_text(Json{{"history", history}}, options.json).c_str());
  } else {
    print_history_text(passes, options);
  }
  return kExitOk;
}

}  // namespace trimctl
