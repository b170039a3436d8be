// One backend as the coordinator follows it (fleet_backends.cpp): its view
// of the claims, the read that refreshes it, the watch that keeps it
// current, and the GetFleet callers waiting for its next read. Private to
// the coordinator's two files.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "claim_view.hpp"
#include "event_loop.hpp"
#include "far_pacing.hpp"
#include "fleet_coordinator.hpp"

namespace trimd::fleet {

struct Coordinator::Backend {
  Backend(EventLoop& loop, const std::string& backend_name, std::function<void()> read_again,
          std::function<void()> far_read)
      : name(backend_name), view(slot_prefix(backend_name)),
        read_timer(loop, std::move(read_again)), far_timer(loop, std::move(far_read)) {}

  std::string name;
  ClaimView view;
  bool have_view = false;
  SteadyPoint view_at{};  // the last read or watch message that updated it
  bool reading = false;
  bool read_wanted = false;  // again, once the read in flight is in
  std::optional<SteadyPoint> last_read_start;
  std::string read_error;  // the last read's, until one succeeds
  // The last read with values went over the bound (a peer's huge values):
  // keys only since then, values tried again after kValuesRetry.
  std::optional<SteadyPoint> values_over_bound_at;
  std::optional<std::uint64_t> watch;          // the client's stream
  std::uint64_t watch_generation = 0;          // which stream a message came from
  bool watch_live = false;                     // etcd said "created"
  std::uint64_t watch_failovers = 0;           // the client's failovers() when it opened
  SteadyPoint last_asked{};                    // by a report (a backend without claims)
  std::vector<std::function<void()>> reports;  // answered after the next read
  // Ignored keys already named in the journal (bounded: past it, counted only).
  std::set<std::string> named_ignored;
  Timer read_timer;
  std::optional<SteadyPoint> read_due;  // when read_timer was last armed to fire
  // Near a slot (a holder, or among the first kNearWaiters waiters): the
  // prefix is watched. Else far: a page is read when far_timer says.
  bool near = false;
  // The last view was cut with fewer claims that count than the near
  // window (keys that do not count crowd the page): the next read takes
  // kClaimsPerRead, so that junk cannot hide how near a claim is.
  bool crowded = false;
  FarPacing pacing;
  Timer far_timer;
  bool judge_deferred = false;  // a judge is on the loop's deferred work
};

}  // namespace trimd::fleet
