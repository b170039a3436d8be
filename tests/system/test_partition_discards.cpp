// The bytes a pass discarded, as trimd reports them (the pass event's BYTES,
// which also feeds LastBytesTrimmed, the lifetime totals and the history),
// are the filesystem's own: counted on its partition, not on the disk it
// shares, and including the discards xfs leaves in flight when FITRIM
// returns. Each figure is checked against the partition's /proc/diskstats.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <iostream>
#include <string>

#include "loopfs.hpp"
#include "partitioned_loop.hpp"
#include "trimd_process.hpp"
#include "wait_until.hpp"

namespace trimd::test {
namespace {

using namespace std::chrono_literals;

constexpr std::size_t kFiles = 300;  // 150 freed extents on each filesystem
constexpr std::uint64_t kFileBytes = 1 << 20;
constexpr double kTolerance = 0.01;  // the issue's bound

// Only the mounts named here are trimmed: the host's own are disabled.
std::string config_for(const std::vector<std::string>& mount_points) {
  std::string toml = R"([idle]
window = "1s"
sample_interval = "200ms"

[trim]
enabled = false
chunk_size = "64MiB"
pause = "0s"
)";
  for (const auto& mount_point : mount_points)
    toml += "\n[[filesystem]]\nmatch = \"" + mount_point + "\"\nenabled = true\n";
  return toml;
}

// The kernel counts a discard when it completes: read the truth only once
// nothing is in flight on the device.
std::uint64_t settled_discard_bytes(const std::string& device_name) {
  wait_until(
      [&] {
        std::ifstream inflight("/sys/class/block/" + device_name + "/inflight");
        std::uint64_t reads = 1, writes = 1;
        return inflight >> reads >> writes && reads == 0 && writes == 0;
      },
      10s, 20ms);
  return discard_counters(device_name).sectors * 512;
}

void fill_and_free(const std::string& mount_point) {
  write_fragmented_files(mount_point, kFiles, kFileBytes);
  delete_every_other(mount_point);
}

// A mount's pass and what its device saw.
struct Measured {
  std::string mount_point;
  std::string device_name;  // "loop3p1"
  std::uint64_t before = 0;
  std::uint64_t reported = 0;   // BYTES of the pass event
  std::uint64_t discarded = 0;  // the device's counter, settled
};

void expect_within_tolerance(const Measured& m, const std::string& what, const std::string& log) {
  std::cout << "[partition-discards] " << what << ": reported " << mib(m.reported) << " MiB, "
            << m.device_name << " diskstats " << mib(m.discarded) << " MiB" << std::endl;
  ::testing::Test::RecordProperty(what + "_reported_mib", std::to_string(mib(m.reported)));
  ::testing::Test::RecordProperty(what + "_diskstats_mib", std::to_string(mib(m.discarded)));
  EXPECT_GT(m.discarded, 0u) << what << ": the device saw no discards";
  const double error =
      std::fabs(static_cast<double>(m.reported) - static_cast<double>(m.discarded));
  EXPECT_LE(error, kTolerance * static_cast<double>(m.discarded))
      << what << ": trimd reported " << m.reported << " bytes discarded, " << m.device_name
      << "'s /proc/diskstats say " << m.discarded << "\n"
      << log;
}

// Runs `trimd --once` over the mounts, each limited by the policy to them.
void trim_once(std::vector<Measured>& mounts) {
  TrimdSandbox sandbox;
  std::vector<std::string> mount_points;
  for (auto& m : mounts) {
    mount_points.push_back(m.mount_point);
    m.before = settled_discard_bytes(m.device_name);
  }
  sandbox.write_config(config_for(mount_points));
  std::vector<std::string> args{"--once"};
  args.insert(args.end(), mount_points.begin(), mount_points.end());
  TrimdProcess trimd(sandbox.args(args), sandbox.log_path("trimd"));
  ASSERT_EQ(trimd.wait_for_exit(120s), 0) << trimd.log();
  for (auto& m : mounts) {
    m.discarded = settled_discard_bytes(m.device_name) - m.before;
    const auto passes = trimd.events(EventId::PassFinished, m.mount_point);
    ASSERT_EQ(passes.size(), 1u) << m.mount_point << "\n" << trimd.log();
    m.reported = field_u64(passes.front(), "BYTES");
  }
  for (const auto& m : mounts) expect_within_tolerance(m, m.mount_point, trimd.log());
}

TEST(PartitionDiscards, EachFilesystemOnASharedDiskReportsItsOwnPartitionsDiscards) {
  REQUIRE_ROOT_OR_FAIL();
  REQUIRE_TOOLS_OR_FAIL("sfdisk", "partx", "udevadm", "mkfs.ext4", "mkfs.xfs", "mount");
  PartitionedImage image = PartitionedImage::create(1280, 2);
  PartitionMount& ext4 = image.partition(1);
  PartitionMount& xfs = image.partition(2);
  ext4.mkfs(Fs::Ext4);
  xfs.mkfs(Fs::Xfs);
  for (PartitionMount* p : {&ext4, &xfs}) {
    p->mount(kNoDiscard);
    fill_and_free(p->mount_point());
  }
  std::vector<Measured> mounts{{ext4.mount_point(), ext4.name()}, {xfs.mount_point(), xfs.name()}};
  trim_once(mounts);
}

TEST(PartitionDiscards, XfsAloneReportsTheDiscardsThatCompleteAfterFitrimReturns) {
  REQUIRE_ROOT_OR_FAIL();
  REQUIRE_TOOLS_OR_FAIL("mkfs.xfs", "mount");
  LoopImage image = LoopImage::create(1024);
  image.mkfs(Fs::Xfs);
  image.mount(kNoDiscard);
  fill_and_free(image.mount_point());
  std::vector<Measured> mounts{{image.mount_point(), image.loop_name()}};
  trim_once(mounts);
}

}  // namespace
}  // namespace trimd::test
