// The watch on a backend's prefix: opened where this host holds or is near
// a slot, closed elsewhere, re-opened after a failover, and every message
// applied to the view (reads, their pacing and the judging are in
// fleet_backends.cpp).
#include <spdlog/spdlog.h>

#include <algorithm>

#include "claim_view.hpp"
#include "etcd_client.hpp"
#include "fleet_backend.hpp"
#include "fleet_coordinator.hpp"

namespace trimd::fleet {

// Every backend where this host holds or is near a slot is watched from
// the view's revision on: a freed slot is seen at once by a near waiter, a
// deleted claim at once by its holder.
void Coordinator::follow(Backend& b) {
  const bool wanted =
      b.have_view && b.near && std::any_of(claims_.begin(), claims_.end(), [&](const auto& c) {
        return c.second.backend == b.name && c.second.put;
      });
  if (!wanted) {
    if (b.watch) client_->cancel(*b.watch);
    b.watch.reset();
    b.watch_live = false;
    return;
  }
  if (b.watch) return;
  ++counters_.watches;
  const auto generation = ++b.watch_generation;
  b.watch_failovers = client_->failovers();
  b.watch_live = false;
  b.watch = client_->stream(
      "/v3/watch", etcd::watch_prefix_request(slot_prefix(b.name), b.view.revision() + 1),
      [this, name = b.name, generation, alive = alive_](const std::optional<nlohmann::json>& m) {
        if (!*alive) return;
        if (!m) return on_watch(name, generation, nullptr);
        try {
          const auto message = etcd::watch_message_of(*m);
          on_watch(name, generation, &message);
        } catch (const std::exception& e) {
          spdlog::debug("fleet: the watch on {}: {}", name, e.what());
          on_watch(name, generation, nullptr);
        }
      },
      [this, name = b.name, generation, alive = alive_](const etcd::Outcome& outcome) {
        if (!*alive) return;
        const auto it = backends_.find(name);
        if (it == backends_.end() || it->second->watch_generation != generation) return;
        spdlog::debug("fleet: the watch on {} ended: {}", name, outcome.error);
        it->second->watch.reset();  // the next read opens another
        it->second->watch_live = false;
        want_read(*it->second, false);
      });
}

// A stream on an endpoint the client has left behind (a call there failed)
// may be quiet for good, as a stopped member keeps its connection open: it
// is opened again at once on the endpoint that answers, after a read.
void Coordinator::follow_failover() {
  for (auto& [name, b] : backends_) {
    if (!b->watch || b->watch_failovers == client_->failovers()) continue;
    client_->cancel(*b->watch);
    b->watch.reset();
    b->watch_live = false;
    want_read(*b, true);
  }
}

void Coordinator::on_watch(const std::string& name, std::uint64_t generation,
                           const etcd::WatchMessage* message) {
  const auto it = backends_.find(name);
  if (it == backends_.end() || it->second->watch_generation != generation || !it->second->watch)
    return;
  Backend& b = *it->second;
  ++counters_.watch_messages;
  // Dropped for a bound: read what was missed, at once where this host
  // holds a slot (a delete of its own claim may be among them: it must stop
  // before the next in line starts), paced for a waiter (a missed delete
  // only keeps it waiting).
  if (!message)
    return want_read(b, false, holds_a_slot(b) ? kHolderReadInterval : kMinReadInterval);
  if (message->canceled) {
    // Compacted past its start, or refused: read, and watch from there.
    client_->cancel(*b.watch);
    b.watch.reset();
    b.watch_live = false;
    return want_read(b, false);
  }
  if (message->created) b.watch_live = true;
  if (!b.have_view) return;
  if (!b.view.apply(*message) && !view_holds_ours(b)) want_read(b, false);
  b.view_at = SteadyClock::now();
  if (!message->events.empty()) judge_soon(b);
}

}  // namespace trimd::fleet
