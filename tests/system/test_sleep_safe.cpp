// Sleep-safe trimming (issue 35, item 1), end to end: the real trimd on a
// private bus with a stand-in for logind (tests/bus/stand_ins.hpp) and a
// chunk inside FITRIM on the slow-TRIM device. trimd holds logind's delay
// lock while the pass runs; on PrepareForSleep(true) the runner is gone and
// the lock released within 100 ms (the bound; both printed),
// nothing trims while "asleep", and after PrepareForSleep(false) trimd
// takes the lock again and the pass goes on from the stopped chunk's
// offset, never from the start; the lock goes with the pass.
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <optional>
#include <string>
#include <thread>

#include "bus_fixture.hpp"
#include "slow_device_helpers.hpp"
#include "slowtrim_mount.hpp"
#include "stand_ins.hpp"
#include "trimd_process.hpp"
#include "wait_until.hpp"

namespace trimd::test {
namespace {

using namespace std::chrono_literals;
using Steady = std::chrono::steady_clock;

// The bound from PrepareForSleep to the runner gone and the lock
// released (it leaves FITRIM within one discard, 3 ms here).
constexpr auto kSleepBound = 100ms;
// 3 ms per discard; 16 MiB chunks (two 8 MiB ext4 groups, about 500 free
// extents of the 4000) take about 1.5 s each: a chunk past the first has
// time to go when the sleep comes.
constexpr int kDiscardMs = 3;
// How long the machine "sleeps": longer than the idle window, so a chunk
// would have started meanwhile had trimd not held its passes.
constexpr auto kAsleep = 1500ms;

double ms(Steady::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// Whether `pid` exits within `timeout` (a pidfd: no polling of /proc), and when.
std::optional<Steady::time_point> wait_exit(pid_t pid, std::chrono::milliseconds timeout) {
  UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  if (pidfd.get() < 0) return Steady::now();  // gone already
  pollfd p{pidfd.get(), POLLIN, 0};
  if (::poll(&p, 1, static_cast<int>(timeout.count())) != 1) return std::nullopt;
  return Steady::now();
}

class SleepSafe : public ::testing::Test {
 protected:
  void SetUp() override {
    REQUIRE_ROOT_OR_FAIL();
    TRIMD_SKIP_OR_FAIL_IF(missing_tools(tools_for(Fs::Ext4)));
    TRIMD_SKIP_OR_FAIL_IF(missing_slowtrim());
    TRIMD_REQUIRE_PROGRAM("dbus-daemon");
    bus_.emplace();
  }

  std::optional<PrivateBus> bus_;
  TrimdSandbox sandbox_;
};

TEST_F(SleepSafe, ASleepStopsTheChunkInFitrimAndReleasesTheLockThenThePassGoesOnAfterTheWake) {
  FragmentedImage original =
      fragmented_image(Fs::Ext4, kSlowImageMib, kSlowFiles, kSlowFileBytes, kExt4SmallGroups);
  original.image.detach();
  SlowTrimMount slow(original.image, Fs::Ext4, kDiscardMs);
  const std::string mnt = slow.mount_point();
  LogindStandIn logind(bus_->address());
  sandbox_.write_config(
      "[idle]\nwindow = \"1s\"\nsample_interval = \"200ms\"\npreempt_interval = \"0s\"\n\n"
      "[trim]\nfirst_delay = \"0s\"\nrandomized_delay = \"0s\"\nchunk_time = \"0s\"\n"
      "chunk_size = \"16MiB\"\npause = \"20ms\"\n\n"
      "[[filesystem]]\nmatch = \"*\"\nenabled = false\n\n"
      "[[filesystem]]\nmatch = \"" +
      mnt + "\"\nenabled = true\n");
  TrimdProcess trimd(sandbox_.args_on_bus(bus_->address()), sandbox_.log_path("trimd"));

  const auto runner = runner_in_fitrim(
      trimd.pid(), [](const FitrimCall& call) { return call.start > 0; }, 120s);
  ASSERT_TRUE(runner) << "no chunk past the first seen in FITRIM\n" << trimd.log();
  const auto inhibitors = logind.inhibitors();
  ASSERT_EQ(inhibitors.size(), 1u) << trimd.log();
  EXPECT_EQ(inhibitors[0].what, "sleep:shutdown");
  EXPECT_EQ(inhibitors[0].who, "trimd");
  EXPECT_EQ(inhibitors[0].mode, "delay");
  EXPECT_EQ(logind.held(), 1u) << "a pass runs: trimd holds its delay lock";

  const pid_t pid = runner->first;
  const std::uint64_t stopped_at = runner->second.start;
  const Steady::time_point signalled = logind.prepare_for_sleep(true);
  const auto gone = wait_exit(pid, 10s);
  const auto released = logind.wait_released(0, 10s);
  ASSERT_TRUE(gone) << "the runner kept trimming\n" << trimd.log();
  ASSERT_TRUE(released) << "the lock was not released\n" << trimd.log();
  EXPECT_FALSE(process_exists(pid)) << "the lock went before the runner was reaped";
  std::cout << "[sleep] PrepareForSleep to runner gone " << ms(*gone - signalled)
            << " ms, to lock released " << ms(*released - signalled) << " ms" << std::endl;
  RecordProperty("runner_gone_ms", std::to_string(ms(*gone - signalled)));
  RecordProperty("lock_released_ms", std::to_string(ms(*released - signalled)));
  EXPECT_LE(*gone - signalled, kSleepBound);
  EXPECT_LE(*released - signalled, kSleepBound);

  const auto stopped = trimd.wait_for_event(EventId::StoppedForSleep, {}, 10s);
  ASSERT_TRUE(stopped) << trimd.log();
  EXPECT_EQ(stopped->at("REASON"), "sleep");
  EXPECT_EQ(stopped->at("CHUNKS"), "1");

  // Asleep: no chunk, no runner, no lock.
  const std::size_t chunks_before = chunk_lines(trimd, mnt).size();
  std::this_thread::sleep_for(kAsleep);
  EXPECT_EQ(chunk_lines(trimd, mnt).size(), chunks_before) << trimd.log();
  EXPECT_TRUE(children_of(trimd.pid()).empty());
  EXPECT_EQ(logind.held(), 0u);

  logind.prepare_for_sleep(false);
  EXPECT_TRUE(
      wait_until([&] { return logind.inhibitors().size() == 2 && logind.held() == 1; }, 10s))
      << "the lock was not taken again after the wake\n"
      << trimd.log();
  ASSERT_TRUE(wait_until([&] { return chunk_lines(trimd, mnt).size() > chunks_before; }, 60s))
      << trimd.log();
  EXPECT_EQ(chunk_lines(trimd, mnt)[chunks_before].offset, stopped_at)
      << "the pass goes on from the stopped chunk";
  ASSERT_TRUE(trimd.wait_for_event(EventId::PassFinished, mnt, 300s)) << trimd.log();
  const auto chunks = chunk_lines(trimd, mnt);
  for (std::size_t i = chunks_before; i < chunks.size(); ++i)
    EXPECT_GE(chunks[i].offset, stopped_at) << "chunk " << chunks[i].number << " went back";
  EXPECT_TRUE(logind.wait_released(1, 10s)) << "no pass left: the lock goes\n" << trimd.log();

  trimd.send(SIGTERM);
  EXPECT_EQ(trimd.wait_for_exit(10s), 0) << trimd.log();
}

}  // namespace
}  // namespace trimd::test
