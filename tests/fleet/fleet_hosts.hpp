// Several trimd processes on one machine for the fleet tier, each a "host"
// of its own: its own ext4 on a loop device (with freed extents to trim),
// state dir, private dbus-daemon and a policy limited to its own mount that
// names one shared backend in [fleet]. What a test reads back: each host's
// log (slot acquired/released, chunks, passes) and etcd's claims.
// Destroyed in reverse: trimd killed, bus stopped, filesystem unmounted and
// its loop device detached, directories removed, on every exit path.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bus_fixture.hpp"
#include "etcd_wire.hpp"
#include "trimd_process.hpp"

namespace trimd::test {

// The [fleet] and the pace of every host's pass.
struct FleetPolicy {
  std::vector<std::string> etcd;
  std::string backend = "pool-a";
  unsigned max_concurrent = 2;
  std::string lease_ttl = "5s";
  // A 64 MiB filesystem in 4 MiB chunks 100 ms apart: a pass of ~1 s
  // (measured), long enough for the others to queue behind it; rate_limit
  // (range per second) makes it longer.
  std::string chunk_size = "4MiB";
  std::string pause = "100ms";
  std::string rate_limit = "0";
  std::string on_unreachable;     // empty: trimd's default
  std::string unreachable_after;  // empty: trimd's default
};

// trimd.toml for one host: idle at once, its own mount point only.
std::string fleet_host_config(const FleetPolicy& policy, const std::string& mount_point);

class FleetHost {
 public:
  FleetHost(const FleetPolicy& policy, std::uint64_t size_mib = 64);
  FleetHost(const FleetHost&) = delete;
  FleetHost& operator=(const FleetHost&) = delete;

  void start();  // trimd on its own bus
  const std::string& mount_point() const { return fs_.image.mount_point(); }
  TrimdProcess& trimd() { return *trimd_; }
  bool started() const { return trimd_.has_value(); }
  std::uint64_t allocated_bytes() const { return fs_.image.allocated_bytes(); }
  std::string disk_name() const { return fs_.image.loop_name(); }  // "loop3", for its discards
  const PrivateBus& bus() const { return bus_; }

 private:
  TrimdSandbox sandbox_;
  FragmentedImage fs_;
  PrivateBus bus_;
  std::optional<TrimdProcess> trimd_;  // last: gone before its bus and filesystem
};

// When a host held a slot, from its log's FleetSlotAcquired and
// FleetSlotReleased or FleetSlotLost (microseconds of the realtime clock;
// `end` 0 while still held).
struct HoldSpan {
  std::string mount_point;
  std::uint64_t begin_usec = 0, end_usec = 0;
};
std::vector<HoldSpan> hold_spans(FleetHost& host);

// The most spans that overlap at one instant.
std::size_t most_at_once(const std::vector<HoldSpan>& spans);

// One read of etcd's claims under a backend: when, and the claims in
// create-revision order (the first max_concurrent hold the slots).
struct ClaimSample {
  std::uint64_t begin_usec = 0, end_usec = 0;  // the read happened in between
  std::vector<etcd::KeyValue> claims;
};
std::optional<ClaimSample> sample_claims(const std::vector<std::string>& etcd,
                                         const std::string& backend);
// The claim's mount point (its JSON value's "mount_point").
std::string claim_mount_point(const etcd::KeyValue& claim);

std::uint64_t realtime_usec_now();

}  // namespace trimd::test
