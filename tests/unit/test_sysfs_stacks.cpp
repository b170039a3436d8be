// Storage stacks this machine's kernel cannot build (md, device-mapper,
// NVMe), from sysfs trees laid out as the kernel does: tests/data/sysfs/
// (make_fixtures.py describes each). Each stack must map a filesystem to its
// own device (where discard support and discarded bytes are read) and to the
// physical disks underneath (idleness, one trim per disk), with the discard
// limits of each.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "block_topology.hpp"
#include "filters.hpp"

namespace trimd {
namespace {

using ::testing::ElementsAre;

MountEntry mount_on(unsigned major, unsigned minor, const std::string& source) {
  MountEntry mount;
  mount.major = major;
  mount.minor = minor;
  mount.source = source;
  mount.fs_type = "ext4";
  mount.mount_point = "/srv";
  return mount;
}

Topology topology_in(const std::string& fixture, const MountEntry& mount) {
  SysfsBlockInventory inventory(std::string(TRIMD_TEST_DATA) + "/sysfs/" + fixture);
  return inventory.topology_of(mount);
}

std::vector<std::string> names(const std::vector<BlockDisk>& disks) {
  std::vector<std::string> out;
  for (const auto& disk : disks) out.push_back(disk.name);
  return out;
}

struct Limits {
  std::uint64_t granularity;
  std::uint64_t max_bytes;
};

void expect_limits(const BlockDisk& disk, Limits limits) {
  EXPECT_EQ(disk.discard_granularity, limits.granularity) << disk.name;
  EXPECT_EQ(disk.discard_max_bytes, limits.max_bytes) << disk.name;
}

constexpr Limits kSataSsd{4096, 2147450880};
constexpr Limits kNvme{512, 2199023255040};

TEST(SysfsStacks, MdRaid0MapsToBothWholeDisksWithItsChunkAsGranularity) {
  const Topology t = topology_in("md-raid0", mount_on(9, 0, "/dev/md0"));
  ASSERT_THAT(names(t.devices), ElementsAre("md0"));
  expect_limits(t.devices[0], {524288, 2147450880});
  ASSERT_THAT(names(t.disks), ElementsAre("sdb", "sdc"));
  expect_limits(t.disks[0], kSataSsd);
  expect_limits(t.disks[1], kSataSsd);
  EXPECT_EQ(t.disks[1].major, 8u);
  EXPECT_EQ(t.disks[1].minor, 32u);
}

TEST(SysfsStacks, MdRaid1OfPartitionsMapsToEachMembersNamespaceAndTakesTheSmallerLimit) {
  const Topology t = topology_in("md-raid1", mount_on(9, 1, "/dev/md1"));
  ASSERT_THAT(names(t.devices), ElementsAre("md1"));
  expect_limits(t.devices[0], {4096, 1073741824});
  EXPECT_TRUE(t.devices[0].supports_discard());
  ASSERT_THAT(names(t.disks), ElementsAre("nvme0n1", "nvme1n1"));
  expect_limits(t.disks[0], kNvme);
  expect_limits(t.disks[1], {4096, 1073741824});
  EXPECT_EQ(t.disks[1].size_bytes, 1953525168ull * 512);
}

TEST(SysfsStacks, DmCryptWithoutAllowDiscardsIsUnsupportedThoughItsDiskSupportsDiscard) {
  const Topology t = topology_in("dm-crypt", mount_on(254, 0, "/dev/mapper/luks-7f3c2a1e"));
  ASSERT_THAT(names(t.devices), ElementsAre("dm-0"));
  EXPECT_FALSE(t.devices[0].supports_discard());
  ASSERT_THAT(names(t.disks), ElementsAre("sda"));
  EXPECT_TRUE(t.disks[0].supports_discard());
  EXPECT_TRUE(skip_no_discard(t).has_value());
}

TEST(SysfsStacks, DmThinGoesThroughThePoolToTheDisksOfItsDataAndMetadata) {
  const Topology t = topology_in("dm-thin", mount_on(254, 3, "/dev/mapper/vg0-thinvol"));
  ASSERT_THAT(names(t.devices), ElementsAre("dm-3"));
  expect_limits(t.devices[0], {65536, 65536});  // one pool block at a time
  EXPECT_FALSE(skip_no_discard(t).has_value());
  // dm-3 -> dm-2 (tpool) -> dm-0 (tmeta) -> nvme0n1p3, dm-1 (tdata) -> sdb1
  ASSERT_THAT(names(t.disks), ElementsAre("nvme0n1", "sdb"));
  expect_limits(t.disks[0], kNvme);
  expect_limits(t.disks[1], kSataSsd);
}

TEST(SysfsStacks, LvmLinearOverAPartitionAndAWholeDiskMapsToBothDisks) {
  const Topology t = topology_in("lvm-linear", mount_on(254, 0, "/dev/mapper/vg1-data"));
  ASSERT_THAT(names(t.devices), ElementsAre("dm-0"));
  expect_limits(t.devices[0], {4096, 67108864});
  ASSERT_THAT(names(t.disks), ElementsAre("sdb", "sdc"));
  expect_limits(t.disks[0], kSataSsd);
  expect_limits(t.disks[1], {4096, 67108864});
}

TEST(SysfsStacks, NvmeNamespacePartitionsMapToTheirOwnNamespace) {
  const Topology second = topology_in("nvme-namespaces", mount_on(259, 4, "/dev/nvme0n2p1"));
  ASSERT_THAT(names(second.devices), ElementsAre("nvme0n2p1"));
  expect_limits(second.devices[0], {4096, 4294966784});  // its namespace's queue
  ASSERT_THAT(names(second.disks), ElementsAre("nvme0n2"));
  EXPECT_EQ(second.disks[0].size_bytes, 500107608ull * 512);

  const Topology first = topology_in("nvme-namespaces", mount_on(259, 2, "/dev/nvme0n1p2"));
  ASSERT_THAT(names(first.devices), ElementsAre("nvme0n1p2"));
  EXPECT_EQ(first.devices[0].size_bytes, 499056984ull * 512);
  ASSERT_THAT(names(first.disks), ElementsAre("nvme0n1"));
  expect_limits(first.disks[0], kNvme);
}

// The head is the disk: I/O to the namespace is counted on it whichever
// controller carries it, and the paths are not disks of their own.
TEST(SysfsStacks, NvmeMultipathPartitionMapsToTheNamespaceHeadNotToItsPaths) {
  const Topology t = topology_in("nvme-multipath", mount_on(259, 1, "/dev/nvme0n1p1"));
  ASSERT_THAT(names(t.devices), ElementsAre("nvme0n1p1"));
  expect_limits(t.devices[0], kNvme);
  ASSERT_THAT(names(t.disks), ElementsAre("nvme0n1"));
  EXPECT_EQ(t.disks[0].major, 259u);
  EXPECT_EQ(t.disks[0].minor, 0u);
}

TEST(SysfsStacks, NvmeMultipathHeadMountedWholeIsItsOwnDisk) {
  const Topology t = topology_in("nvme-multipath", mount_on(259, 0, "/dev/nvme0n1"));
  ASSERT_THAT(names(t.devices), ElementsAre("nvme0n1"));
  ASSERT_THAT(names(t.disks), ElementsAre("nvme0n1"));
  expect_limits(t.disks[0], kNvme);
}

// Whether a disk queues its discards decides how trimd preempts on it
// (docs/preemption.md, "Queued TRIM"): NVMe always, SATA as libata says.
TEST(SysfsStacks, ReadsHowEachDiskQueuesItsDiscards) {
  const Topology raid0 = topology_in("md-raid0", mount_on(9, 0, "/dev/md0"));
  ASSERT_THAT(names(raid0.disks), ElementsAre("sdb", "sdc"));
  EXPECT_EQ(raid0.disks[0].discard_queueing, DiscardQueueing::Queued) << "libata: queued";
  EXPECT_EQ(raid0.disks[1].discard_queueing, DiscardQueueing::Exclusive)
      << "libata: forced_unqueued, a drive on the no-queued-TRIM list";
  EXPECT_EQ(raid0.devices[0].discard_queueing, DiscardQueueing::Unknown) << "md0 itself";
  const Topology raid1 = topology_in("md-raid1", mount_on(9, 1, "/dev/md1"));
  for (const auto& disk : raid1.disks)
    EXPECT_EQ(disk.discard_queueing, DiscardQueueing::Queued) << disk.name;
  const Topology crypt = topology_in("dm-crypt", mount_on(254, 0, "/dev/mapper/root"));
  ASSERT_THAT(names(crypt.disks), ElementsAre("sda"));
  EXPECT_EQ(crypt.disks[0].discard_queueing, DiscardQueueing::Exclusive) << "libata: unqueued";
}

}  // namespace
}  // namespace trimd
