// The attacks on the fleet, replayed against real trimd processes (their
// own loop filesystem, state and private bus) on a real etcd cluster: a
// peer that stuffs the prefix gets no discard past the cap, thousands of
// unprivileged GetFleetView calls keep trimd on the bus with its open files
// under 128, and a hostile peer's names reach the admin's terminal escaped
// (docs/fleet.md, "Trust").
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <iostream>

#include "etcd_peer.hpp"
#include "fleet_hosts_fixture.hpp"
#include "process_watch.hpp"
#include "trimd_log.hpp"
#include "wait_until.hpp"

namespace trimd::test {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr std::size_t kMaxOpenFiles = 128;
constexpr std::size_t kMaxRss = 128u << 20;

class FleetTrust : public FleetHostsTest {
 protected:
  void SetUp() override {
    FleetHostsTest::SetUp();
    if (HasFatalFailure() || IsSkipped()) return;
    policy_.max_concurrent = 1;
    peer_.emplace(policy_.etcd);
  }

  // A live claim on the only slot, as another trimd holds it.
  std::string hold_the_slot(const std::string& host = "holder", const std::string& mount = "/srv") {
    const auto key = slot_key(policy_.backend, host, "fs");
    peer_->put(key, claim_json(host, mount), peer_->grant(600));
    return key;
  }

  // How long a read of the manager's State takes over the host's bus.
  static Clock::duration state_read(const FleetHost& host, std::string& failure) {
    const auto start = Clock::now();
    const auto read =
        run_command(host.bus().busctl({"get-property", "org.trimd.trimd1", "/org/trimd/trimd1",
                                       "org.trimd.trimd1.Manager", "State"}),
                    10s);
    if (!read.ok()) failure = read.err;
    return Clock::now() - start;
  }

  std::optional<EtcdPeer> peer_;
};

// A live peer holds the only slot while another stuffs ~100 MiB of
// lease-less keys under the prefix: the host waits, is never told etcd is
// unreachable (on_unreachable = "local" would trim alone), and its disk
// gets no discard until the holder goes.
TEST_F(FleetTrust, APeerStuffingThePrefixUnderALiveHolderGetsNoDiscardPastTheCap) {
  policy_.unreachable_after = "5s";
  const auto holder = hold_the_slot();
  peer_->stuff(policy_.backend, "stuffing", 100, 1u << 20);
  auto& host = add_host(policy_);
  const auto discards_before = discard_counters(host.disk_name()).completed;
  host.start();
  ProcessWatch watch(host.trimd().pid());
  wait_until([] { return false; }, 15s, 100ms);  // three times unreachable_after
  std::string failure;
  const auto read_took = state_read(host, failure);
  watch.stop();
  EXPECT_TRUE(host.trimd().events(EventId::FleetSlotAcquired).empty()) << host.trimd().log();
  EXPECT_TRUE(host.trimd().events(EventId::FleetUnreachable).empty()) << host.trimd().log();
  EXPECT_EQ(discard_counters(host.disk_name()).completed, discards_before)
      << "discards on a disk whose host holds no slot";
  EXPECT_LT(watch.most_open_files(), kMaxOpenFiles);
  EXPECT_LT(watch.peak_rss_bytes(), kMaxRss);
  EXPECT_LT(read_took, 2s) << failure;
  // What the bus carries of the holders stays a line, whatever they wrote.
  const auto reason = run_command(
      host.bus().busctl({"--json=short", "call", "org.trimd.trimd1", "/org/trimd/trimd1",
                         "org.trimd.trimd1.Manager", "GetFleetView"}),
      10s);
  EXPECT_TRUE(reason.ok()) << reason.err;
  EXPECT_LT(reason.out.size(), 256u << 10);
  std::cout << "[fleet] stuffed prefix, live holder: " << watch.most_open_files()
            << " open files at most, peak RSS " << (watch.peak_rss_bytes() >> 20)
            << " MiB, a State read took "
            << std::chrono::duration_cast<std::chrono::milliseconds>(read_took).count() << " ms"
            << std::endl;
  // The holder goes: the host trims, so the test above could have failed.
  peer_->remove(holder);
  EXPECT_TRUE(wait_until([&] { return finished(host); }, 30s, 200ms)) << host.trimd().log();
  EXPECT_GT(discard_counters(host.disk_name()).completed, discards_before);
}

// 2,048 GetFleetView calls from uid 65534 on 16 connections, while the
// prefix holds 40 lease-less keys of 1 MiB: every call answered (a page,
// or Busy), open files under 128 throughout, and trimd still on the bus.
TEST_F(FleetTrust, ThousandsOfUnprivilegedGetFleetCallsKeepTrimdOnTheBusWithFewOpenFiles) {
  REQUIRE_TOOLS_OR_FAIL("setpriv");
  peer_->stuff(policy_.backend, "huge", 40, 1u << 20);
  auto& host = add_host(policy_);
  host.start();
  ASSERT_TRUE(wait_until([&] { return finished(host); }, 30s, 200ms))
      << "lease-less keys held the slot\n"
      << host.trimd().log();
  ProcessWatch watch(host.trimd().pid());
  const auto flood = run_command({"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                                  FLOOD_BINARY, host.bus().address(), "16", "128", "GetFleetView"},
                                 90s);
  std::string failure;
  const auto read_took = state_read(host, failure);
  watch.stop();
  std::cout << "[fleet] 2048 GetFleetView calls as nobody: " << flood.out << "  most open files "
            << watch.most_open_files() << ", peak RSS " << (watch.peak_rss_bytes() >> 20) << " MiB"
            << std::endl;
  EXPECT_TRUE(flood.ok()) << flood.out << flood.err;
  EXPECT_NE(flood.out.find("answered=2048 "), std::string::npos) << flood.out;
  EXPECT_NE(flood.out.find(" other=0 "), std::string::npos) << flood.out;
  EXPECT_EQ(flood.out.find(" ok=0 "), std::string::npos) << "no call got a page" << flood.out;
  EXPECT_LT(watch.most_open_files(), kMaxOpenFiles);
  EXPECT_LT(watch.peak_rss_bytes(), kMaxRss);
  EXPECT_TRUE(host.trimd().running());
  EXPECT_LT(read_took, 2s) << failure;
}

// A live claim whose host and mount point are terminal escapes, and a
// lease-less key: trimctl fleet shows the first escaped and the second
// ignored, and no escape byte reaches the terminal.
TEST_F(FleetTrust, TrimctlFleetShowsAHostilePeerEscapedAndALeaselessKeyIgnored) {
  const auto holder =
      hold_the_slot("\x1b]0;pwned\x07\x1b[2J", "/srv/\x1b[1A\x1b[2K\rFAKE: all good");
  peer_->put(slot_key(policy_.backend, "squatter", "fs"), claim_json("squatter", "/x"));
  auto& host = add_host(policy_);
  host.start();
  ASSERT_TRUE(wait_until(
      [&] {
        const auto waiting =
            run_command({TRIMCTL_BINARY, "--address", host.bus().address(), "fleet"}, 10s);
        return waiting.ok() && waiting.out.find("(this trimd)") != std::string::npos;
      },
      30s, 200ms))
      << host.trimd().log();
  const auto fleet = run_command({TRIMCTL_BINARY, "--address", host.bus().address(), "fleet"}, 10s);
  ASSERT_TRUE(fleet.ok()) << fleet.err;
  std::cout << "[fleet] trimctl fleet behind a hostile peer:\n" << fleet.out;
  EXPECT_EQ(fleet.out.find('\x1b'), std::string::npos) << "ESC reached the terminal";
  EXPECT_EQ(fleet.out.find('\r'), std::string::npos);
  EXPECT_NE(fleet.out.find("\\x1b]0;pwned\\x07"), std::string::npos) << fleet.out;
  EXPECT_NE(fleet.out.find("(no lease)"), std::string::npos) << fleet.out;
  peer_->remove(holder);
  EXPECT_TRUE(wait_until([&] { return finished(host); }, 30s, 200ms)) << host.trimd().log();
}

}  // namespace
}  // namespace trimd::test
