// Issue 16, item 1: a filesystem the policy excludes must never be trimmed,
// even when a trimmed filesystem is mounted on one of its directories and
// unmounted again and again while TrimNow names it. Between trimd reading
// mountinfo and FITRIM, the mount point is as often as not a plain directory
// of the excluded filesystem; a path checked by st_dev alone let FITRIM
// through to it (229 MiB discarded in 60 s). Judged by the excluded loop
// device's discard counters and its backing file's allocation.
//
// 15 s here; TRIMD_CHURN_SECONDS=60 runs the full minute.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "bus_fixture.hpp"
#include "loopfs.hpp"
#include "trimd_process.hpp"

namespace trimd::test {
namespace {

using namespace std::chrono_literals;

std::chrono::seconds churn_time() {
  const char* text = std::getenv("TRIMD_CHURN_SECONDS");
  return std::chrono::seconds{text ? std::max(1, std::atoi(text)) : 15};
}

// The error when trimd refused (the mount point is not tracked right now).
CommandResult trim_now(const PrivateBus& bus, const std::string& mount_point) {
  return run_command(
      bus.busctl({"call", "org.trimd.trimd1", "/org/trimd/trimd1", "org.trimd.trimd1.Manager",
                  "TrimNow", "asb", "1", mount_point, "true"}),
      10s);
}

// Mounts `device` on `mount_point` and unmounts it again until stopped;
// counts the umounts that found it busy. trimd rescans 200 ms after the
// mount table last changed: an umount swept across the 15 ms after that
// lands, now and then, inside the rescan, between its reading mountinfo and
// its look at the path. The mount point then shows the excluded filesystem
// for 40-100 ms, while TrimNow keeps asking for chunks.
class MountChurn {
 public:
  MountChurn(std::string device, std::string mount_point)
      : device_(std::move(device)), mount_point_(std::move(mount_point)),
        thread_([this] { run(); }) {}
  ~MountChurn() { stop(); }
  void stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  unsigned cycles() const { return cycles_; }
  unsigned busy() const { return busy_; }

 private:
  void run() {
    std::minstd_rand random(16);
    std::uniform_int_distribution<int> mounted_us(200'000, 215'000);
    std::uniform_int_distribution<int> unmounted_ms(40, 100);
    while (!stop_) {
      if (::mount(device_.c_str(), mount_point_.c_str(), "ext4", 0, "nodiscard") != 0) return;
      std::this_thread::sleep_for(std::chrono::microseconds{mounted_us(random)});
      while (::umount2(mount_point_.c_str(), 0) != 0) {
        if (errno != EBUSY) return;
        ++busy_;
        std::this_thread::sleep_for(1ms);
      }
      ++cycles_;
      std::this_thread::sleep_for(std::chrono::milliseconds{unmounted_ms(random)});
    }
  }

  std::string device_;
  std::string mount_point_;
  std::atomic<bool> stop_{false};
  std::atomic<unsigned> cycles_{0};
  std::atomic<unsigned> busy_{0};
  std::thread thread_;
};

// Whatever the churn left mounted goes before the excluded filesystem does.
struct LazyUnmountOnExit {
  std::string mount_point;
  ~LazyUnmountOnExit() {
    while (::umount2(mount_point.c_str(), MNT_DETACH) == 0) {
    }
  }
};

class MountChurnTest : public ::testing::Test {
 protected:
  void SetUp() override {
    REQUIRE_ROOT_OR_FAIL();
    TRIMD_SKIP_OR_FAIL_IF(missing_tools(tools_for(Fs::Ext4)));
    REQUIRE_TOOLS_OR_FAIL("dbus-daemon", "busctl");
  }

  TrimdSandbox sandbox_;
};

TEST_F(MountChurnTest, NeverTrimsTheExcludedFilesystemUnderAMountThatComesAndGoes) {
  // The excluded filesystem, with 64 MiB of freed extents a trim would discard.
  FragmentedImage excluded = fragmented_image(Fs::Ext4, 256, 1024, 128 * 1024);
  FragmentedImage churned = fragmented_image(Fs::Ext4, 64, 128, 128 * 1024);
  churned.image.unmount();
  const std::string mount_point = excluded.image.mount_point() + "/churn";
  ASSERT_EQ(::mkdir(mount_point.c_str(), 0755), 0);
  LazyUnmountOnExit unmount_churned{mount_point};
  excluded.image.sync();
  sandbox_.write_config(
      "[idle]\nwindow = \"1s\"\nsample_interval = \"200ms\"\n\n"
      "[trim]\nfirst_delay = \"0s\"\nrandomized_delay = \"0s\"\npause = \"0s\"\n"
      "chunk_size = \"16MiB\"\n\n"
      "[[filesystem]]\nmatch = \"*\"\nenabled = false\n\n"
      "[[filesystem]]\nmatch = \"" +
      mount_point + "\"\nenabled = true\n");
  const DiscardCounters before = discard_counters(excluded.image.loop_name());
  const std::uint64_t allocated_before = excluded.image.allocated_bytes();

  PrivateBus bus;  // the bus tests' config: system-bus rules plus trimd's policy file
  unsigned requests = 0;
  {
    TrimdProcess trimd(sandbox_.args_on_bus(bus.address()), sandbox_.log_path("trimd"));
    MountChurn churn(churned.image.device(), mount_point);
    const auto end = std::chrono::steady_clock::now() + churn_time();
    std::string refusal;
    while (std::chrono::steady_clock::now() < end && trimd.running()) {
      const CommandResult call = trim_now(bus, mount_point);
      if (call.ok())
        ++requests;
      else
        refusal = call.err;
    }
    churn.stop();
    ASSERT_TRUE(trimd.running()) << trimd.log();
    const auto chunks = trimd.events(EventId::ChunkStarted, mount_point).size();
    std::cout << "[churn] " << churn_time().count() << " s: " << churn.cycles()
              << " mount/umount cycles (" << churn.busy() << " umounts busy), " << requests
              << " TrimNow accepted, " << chunks << " chunks started, "
              << trimd.events(EventId::FilesystemGone, mount_point).size()
              << " gone events; last refusal: " << refusal << std::endl;
    trimd.send(SIGTERM);
    EXPECT_EQ(trimd.wait_for_exit(30s), 0) << trimd.log();
    EXPECT_GT(requests, 0u) << "no TrimNow reached trimd\n" << trimd.log();
  }

  const DiscardCounters after = discard_counters(excluded.image.loop_name());
  std::cout << "[churn] discards on the excluded disk: " << after.completed - before.completed
            << " (" << (after.sectors - before.sectors) * 512 / 1024 << " KiB)" << std::endl;
  RecordProperty("excluded_discard_sectors", std::to_string(after.sectors - before.sectors));
  EXPECT_EQ(after.completed, before.completed) << "the excluded filesystem was trimmed";
  EXPECT_EQ(after.sectors, before.sectors);
  EXPECT_GE(excluded.image.allocated_bytes(), allocated_before);
}

}  // namespace
}  // namespace trimd::test
