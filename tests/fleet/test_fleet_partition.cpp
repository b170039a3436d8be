// Fenced under partition: a holder whose network to etcd is cut in the
// middle of its chunks stops trimming before its lease can expire on
// etcd's side, so the waiter that gets the slot next never trims beside
// it. Two real trimd hosts on one backend with one slot, each on a slow
// device (bench/slowtrim, 4 ms a discard: passes of seconds), the holder in
// a network namespace of its own behind a veth pair; the devices' own
// discard counters, sampled every millisecond, say who discarded when.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <iostream>
#include <thread>

#include "etcd_member.hpp"
#include "fleet_hosts.hpp"
#include "netns_link.hpp"
#include "slow_device_helpers.hpp"
#include "slowtrim_mount.hpp"
#include "trimd_log.hpp"
#include "wait_until.hpp"

namespace trimd::test {
namespace {

using namespace std::chrono_literals;

// When a disk's discard counter last moved, and when it first moved after
// a mark, from /proc/diskstats read every millisecond on a thread.
class DiscardClock {
 public:
  explicit DiscardClock(std::string disk)
      : disk_(std::move(disk)), last_count_(discard_counters(disk_).completed), thread_([this] {
          while (!stop_) {
            const auto count = discard_counters(disk_).completed;
            if (count != last_count_) {
              const auto now = realtime_usec_now();
              last_count_ = count;
              last_change_ = now;
              if (first_after_mark_ == 0 && mark_ != 0 && now >= mark_) first_after_mark_ = now;
              ++changes_after_mark_;
            }
            std::this_thread::sleep_for(1ms);
          }
        }) {}
  ~DiscardClock() { stop(); }
  DiscardClock(const DiscardClock&) = delete;
  DiscardClock& operator=(const DiscardClock&) = delete;

  void mark(std::uint64_t usec) {
    changes_after_mark_ = 0;
    mark_ = usec;
  }
  void stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  std::uint64_t last_change() const { return last_change_; }
  std::uint64_t first_change_after_mark() const { return first_after_mark_; }
  std::uint64_t changes_after_mark() const { return changes_after_mark_; }

 private:
  std::string disk_;
  std::uint64_t last_count_;
  std::atomic<std::uint64_t> last_change_{0}, first_after_mark_{0}, mark_{0},
      changes_after_mark_{0};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// A host on a slow device: its filesystem, its sandbox and its trimd.
struct SlowHost {
  explicit SlowHost()
      : fs(fragmented_image(Fs::Ext4, kSlowImageMib, kSlowFiles, kSlowFileBytes,
                            kExt4SmallGroups)) {
    fs.image.detach();
    slow.emplace(fs.image, Fs::Ext4, 4);
  }
  void start(const FleetPolicy& policy, const std::vector<std::string>& wrapper = {}) {
    sandbox.write_config(fleet_host_config(policy, slow->mount_point()));
    trimd.emplace(wrapper, sandbox.args(), sandbox.log_path("trimd"));
  }

  FragmentedImage fs;
  std::optional<SlowTrimMount> slow;
  TrimdSandbox sandbox;
  std::optional<TrimdProcess> trimd;  // last: gone before its filesystem
};

class FleetPartition : public ::testing::Test {
 protected:
  void SetUp() override {
    REQUIRE_ROOT_OR_FAIL();
    TRIMD_SKIP_OR_FAIL_IF(missing_tools(tools_for(Fs::Ext4)));
    TRIMD_SKIP_OR_FAIL_IF(missing_slowtrim());
    REQUIRE_TOOLS_OR_FAIL("etcd", "etcdctl", "ip", "nsenter");
  }
};

TEST_F(FleetPartition, AHolderCutOffFromEtcdStopsBeforeTheWaiterStarts) {
  NetnsLink link;
  EtcdMember etcd({}, {}, {link.here()});
  FleetPolicy policy;
  policy.max_concurrent = 1;
  policy.lease_ttl = "5s";
  policy.chunk_size = "16MiB";
  policy.pause = "100ms";
  policy.on_unreachable = "wait";  // cut off, the holder must not trim alone either
  SlowHost holder, waiter;

  policy.etcd = {etcd.url_on(link.here())};
  holder.start(policy, link.enter());
  ASSERT_TRUE(
      holder.trimd->wait_for_event(EventId::FleetSlotAcquired, holder.slow->mount_point(), 60s))
      << holder.trimd->log();
  policy.etcd = {etcd.url()};
  waiter.start(policy);
  ASSERT_TRUE(wait_until(
      [&] {
        const auto claims = sample_claims({etcd.url()}, policy.backend);
        return claims && claims->claims.size() == 2;
      },
      30s, 100ms))
      << "the waiter never queued\n"
      << waiter.trimd->log();

  DiscardClock holder_disk(holder.slow->loop_name()), waiter_disk(waiter.slow->loop_name());
  ASSERT_TRUE(runner_in_fitrim(
      holder.trimd->pid(), [](const FitrimCall&) { return true; }, 30s))
      << "the holder was not trimming\n"
      << holder.trimd->log();
  const auto cut_at = realtime_usec_now();
  holder_disk.mark(cut_at);
  waiter_disk.mark(cut_at);
  link.cut();

  const bool waiter_trimmed = wait_until(
      [&] {
        return !waiter.trimd->events(EventId::FleetSlotAcquired).empty() &&
               waiter_disk.first_change_after_mark() != 0;
      },
      60s, 20ms);
  wait_until([] { return false; }, 1s, 100ms);  // the sampler sees the last of both
  holder_disk.stop();
  waiter_disk.stop();
  ASSERT_TRUE(waiter_trimmed) << "the waiter never got the slot\n" << waiter.trimd->log();

  const auto lost = holder.trimd->events(EventId::FleetSlotLost);
  const auto acquired = waiter.trimd->events(EventId::FleetSlotAcquired);
  ASSERT_FALSE(lost.empty()) << "the holder never stopped\n" << holder.trimd->log();
  const auto holder_stopped = field_u64(lost.front(), "__REALTIME_TIMESTAMP");
  const auto waiter_started = field_u64(acquired.front(), "__REALTIME_TIMESTAMP");
  const auto holder_last = holder_disk.last_change();
  const auto waiter_first = waiter_disk.first_change_after_mark();
  std::cout << "[fleet] link cut at 0 ms; the holder's last discard at "
            << (static_cast<long long>(holder_last) - static_cast<long long>(cut_at)) / 1000
            << " ms, its slot given up at "
            << (static_cast<long long>(holder_stopped) - static_cast<long long>(cut_at)) / 1000
            << " ms; the waiter's slot at "
            << (static_cast<long long>(waiter_started) - static_cast<long long>(cut_at)) / 1000
            << " ms, its first discard at "
            << (static_cast<long long>(waiter_first) - static_cast<long long>(cut_at)) / 1000
            << " ms" << std::endl;
  EXPECT_GT(holder_disk.changes_after_mark(), 0u) << "the holder was not discarding at the cut";
  EXPECT_LT(holder_last, waiter_first) << "both trimmed at once";
  EXPECT_LT(holder_stopped, waiter_started);
}

}  // namespace
}  // namespace trimd::test
