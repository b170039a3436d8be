// When a waiter far behind a backend's slots reads its claims again
// (docs/fleet.md, "At scale"). Only the waiters near a slot watch the
// prefix; the others read it now and then, a page at a time, and decide
// from each read whether they are near yet. Each read shows how far the
// page reaches (the create revision of its last claim that could be near)
// and this host's claim has its own create revision: from how fast the
// page's reach moved since the last read, the next read is due when about
// half the way to this claim is left, within [kFarReadMin, kFarReadMax].
// A line that did not move backs off (doubling, up to kFarReadMax). The
// estimate only paces: whether a claim is near is decided by a read alone.
#pragma once

#include <cstdint>
#include <optional>

#include "time.hpp"

namespace trimd::fleet {

inline constexpr Duration kFarReadMin = std::chrono::seconds{1};
inline constexpr Duration kFarReadFirst = std::chrono::seconds{2};
inline constexpr Duration kFarReadMax = std::chrono::seconds{10};

class FarPacing {
 public:
  // A read at `now` reached the create revision `reach`; this host's
  // nearest claim was created at `ours`. The delay to the next read.
  Duration next(SteadyPoint now, std::int64_t reach, std::int64_t ours);
  // Near (or gone): the next far read starts afresh.
  void reset();

 private:
  std::optional<SteadyPoint> at_;
  std::int64_t reach_ = 0;
  Duration last_{};
};

// `delay` moved by up to a fifth either way, by `random` (any 32 bits):
// waiters that arrived together do not read together.
Duration jittered(Duration delay, std::uint32_t random);

}  // namespace trimd::fleet
