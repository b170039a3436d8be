// Driving the daemon's event loop from a fleet test: run it until a state
// holds, or until one etcd call has its reply.
#pragma once

#include <optional>
#include <string>

#include "etcd_client.hpp"
#include "event_loop.hpp"

namespace trimd::test {

// Runs the loop until `done` holds (checked every 20 ms) or `limit` passes.
template <typename Done>
bool run_loop_until(EventLoop& loop, Done done, Duration limit) {
  Timer check(loop, [&] {
    if (done()) loop.quit();
  });
  check.arm_every(std::chrono::milliseconds{20});
  Timer guard(loop, [&] { loop.quit(); });
  guard.arm_in(limit);
  loop.run();
  return done();
}

// One call, the loop run until its reply (or `limit`: "no reply in time").
inline etcd::Outcome call_and_wait(EventLoop& loop, etcd::Client& client, const std::string& path,
                                   const nlohmann::json& body,
                                   Duration limit = std::chrono::seconds{10}) {
  std::optional<etcd::Outcome> outcome;
  client.call(path, body, [&](const etcd::Outcome& o) { outcome = o; });
  run_loop_until(
      loop, [&] { return outcome.has_value(); }, limit);
  return outcome.value_or(etcd::Outcome{std::nullopt, "no reply in time"});
}

}  // namespace trimd::test
