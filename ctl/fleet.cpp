// trimctl fleet: the slots of every shared backend this host uses, read from
// etcd through trimd (GetFleet): who holds them and who waits, in order.
#include <cstdio>
#include <map>

#include "commands.hpp"
#include "json.hpp"
#include "table.hpp"
#include "terminal_text.hpp"

namespace trimctl {

namespace {

const std::vector<Column>& fleet_columns() {
  static const std::vector<Column> kColumns{{"BACKEND"},
                                            {"#"},
                                            {"SLOT"},
                                            {"HOST", Ellipsize::End, 8},
                                            {"MOUNT", Ellipsize::Middle, 12, 1}};
  return kColumns;
}

std::vector<Cell> claim_row(const FleetClaim& claim) {
  return {{claim.backend},
          {std::to_string(claim.position)},
          {claim.holds ? "holds" : "waits", "", claim.holds ? Color::Green : Color::None},
          {claim.host},
          {claim.mount_point + (claim.ours ? " (this trimd)" : "")}};
}

Json claim_json(const FleetClaim& claim) {
  return {{"backend", claim.backend},
          {"max_concurrent", static_cast<uint64_t>(claim.max_concurrent)},
          {"position", static_cast<uint64_t>(claim.position)},
          {"host", claim.host},
          {"mount_point", claim.mount_point},
          {"holds_slot", claim.holds},
          {"this_trimd", claim.ours}};
}

// "pool-a: 2/2 slots held, 3 waiting" per backend, after the table.
void print_summary(const std::vector<FleetClaim>& claims) {
  std::map<std::string, std::pair<unsigned, unsigned>> held_waiting;
  std::map<std::string, unsigned> max_of;
  for (const auto& claim : claims) {
    auto& [held, waiting] = held_waiting[claim.backend];
    ++(claim.holds ? held : waiting);
    max_of[claim.backend] = claim.max_concurrent;
  }
  for (const auto& [backend, counts] : held_waiting)
    std::fputs(text_line(backend + ": " + std::to_string(counts.first) + "/" +
                         std::to_string(max_of[backend]) + " slots held, " +
                         std::to_string(counts.second) + " waiting")
                   .c_str(),
               stdout);
}

}  // namespace

int fleet_command(Client& client, const Options& options) {
  const auto claims = client.fleet();
  if (options.quiet) return kExitOk;
  if (options.json_output()) {
    Json list = Json::array();
    for (const auto& claim : claims) list.push_back(claim_json(claim));
    std::printf("%s\n", json_text(Json{{"claims", list}}, options.json).c_str());
    return kExitOk;
  }
  if (claims.empty()) {
    if (options.legend)
      std::printf("No filesystem of this host's backends waits for or holds a slot.\n");
    return kExitOk;
  }
  std::vector<std::vector<Cell>> rows;
  for (const auto& claim : claims) rows.push_back(claim_row(claim));
  const TableStyle style{options.terminal.columns, options.full, options.legend,
                         options.terminal.colors};
  std::printf("%s", render_table(fleet_columns(), rows, style).c_str());
  if (options.legend) print_summary(claims);
  return kExitOk;
}

}  // namespace trimctl
