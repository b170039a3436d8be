// trimctl fleet: the slots of every shared backend this host uses, as trimd
// sees them in etcd (GetFleetView): who holds them and who waits, in order,
// which keys under the prefix do not count and why, and what the page
// leaves out. Hosts and mount points are other hosts' words: they reach the
// terminal escaped (render_table, text_line).
#include <cstdio>
#include <string>

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

bool counts(const FleetClaim& claim) { return claim.position > 0; }

std::vector<Cell> claim_row(const FleetClaim& claim) {
  const std::string slot = !counts(claim) ? "ignored" : claim.holds ? "holds" : "waits";
  std::string mount = claim.mount_point;
  if (claim.ours) mount += " (this trimd)";
  if (!claim.note.empty()) mount += " (" + claim.note + ")";
  return {{claim.backend},
          {counts(claim) ? std::to_string(claim.position) : "-"},
          {slot, "",
           claim.holds      ? Color::Green
           : !counts(claim) ? Color::Yellow
                            : Color::None},
          {claim.host},
          {mount}};
}

Json claim_json(const FleetClaim& claim) {
  return {{"backend", claim.backend},
          {"max_concurrent", static_cast<uint64_t>(claim.max_concurrent)},
          {"position", static_cast<uint64_t>(claim.position)},
          {"host", claim.host},
          {"mount_point", claim.mount_point},
          {"holds_slot", claim.holds},
          {"this_trimd", claim.ours},
          {"counts", counts(claim)},
          {"note", claim.note}};
}

Json backend_json(const FleetBackend& backend) {
  return {{"backend", backend.backend},
          {"max_concurrent", static_cast<uint64_t>(backend.max_concurrent)},
          {"claims", backend.counted},
          {"ignored", backend.ignored},
          {"past_the_read", backend.unread},
          {"not_listed", backend.unlisted},
          {"names_unread", backend.names_unread},
          {"error", backend.error}};
}

// "pool-a: 2/2 slots held, 3 waiting (1 not listed); 2 keys ignored", per
// backend, after the table.
std::string summary_of(const FleetBackend& backend) {
  const auto held = std::min<uint64_t>(backend.counted, backend.max_concurrent);
  std::string text = backend.backend + ": " + std::to_string(held) + "/" +
                     std::to_string(backend.max_concurrent) + " slots held, " +
                     std::to_string(backend.counted - held) + " waiting";
  if (backend.unlisted > 0) text += " (" + std::to_string(backend.unlisted) + " not listed)";
  if (backend.ignored > 0)
    text += "; " + std::to_string(backend.ignored) + " key(s) ignored (they do not count)";
  if (backend.unread > 0)
    text += "; " + std::to_string(backend.unread) + " more key(s) past the read's bound";
  if (backend.names_unread) text += "; names unknown (values over the bound)";
  if (!backend.error.empty()) text += "; not read now: " + backend.error;
  return text;
}

}  // namespace

int fleet_command(Client& client, const Options& options) {
  const auto view = client.fleet();
  if (options.quiet) return kExitOk;
  if (options.json_output()) {
    Json claims = Json::array();
    for (const auto& claim : view.claims) claims.push_back(claim_json(claim));
    Json backends = Json::array();
    for (const auto& backend : view.backends) backends.push_back(backend_json(backend));
    std::printf("%s\n",
                json_text(Json{{"claims", claims}, {"backends", backends}}, options.json).c_str());
    return kExitOk;
  }
  if (view.claims.empty()) {
    if (options.legend)
      std::printf("No filesystem of this host's backends waits for or holds a slot.\n");
    return kExitOk;
  }
  std::vector<std::vector<Cell>> rows;
  for (const auto& claim : view.claims) rows.push_back(claim_row(claim));
  const TableStyle style{options.terminal.columns, options.full, options.legend,
                         options.terminal.colors};
  std::printf("%s", render_table(fleet_columns(), rows, style).c_str());
  if (options.legend)
    for (const auto& backend : view.backends)
      std::fputs(text_line(summary_of(backend)).c_str(), stdout);
  return kExitOk;
}

}  // namespace trimctl
