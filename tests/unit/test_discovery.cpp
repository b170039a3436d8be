// From a mount table to tracked filesystems, with fake sysfs and fake probes.
#include "discovery.hpp"
#include "manager.hpp"

#include <gmock/gmock.h>

#include <gtest/gtest.h>
#include <algorithm>

#include <map>

using namespace trimd;
using ::testing::ElementsAre;

namespace {

class FakeInventory : public BlockInventory {
 public:
  std::map<std::string, Topology> by_source;
  Topology topology_of(const MountEntry& mount) override {
    auto it = by_source.find(mount.source);
    return it == by_source.end() ? Topology{} : it->second;
  }
};

class FakeProber : public FsProber {
 public:
  std::map<std::string, std::string> uuids;  // by mount point
  std::optional<std::string> uuid(const std::string& mount_point, const std::string&) override {
    auto it = uuids.find(mount_point);
    if (it == uuids.end()) return std::nullopt;
    return it->second;
  }
  FsGeometry geometry(const std::string&, const std::string& fs_type,
                      std::uint64_t device_size) override {
    return FsGeometry{fs_type, device_size, 0};
  }
  // Who is at a mount point right now: the table's last mount there, unless
  // `mount_ids` says otherwise.
  const std::vector<MountEntry>* table = nullptr;
  std::map<std::string, int> mount_ids;
  std::string swapped_while_probed;  // its second look finds another mount
  std::map<std::string, int> looks;
  MountIdentity identify(const std::string& mount_point) override {
    const bool swapped = ++looks[mount_point] > 1 && mount_point == swapped_while_probed;
    MountIdentity identity;
    identity.device = static_cast<dev_t>(mount_point.size());  // distinct, and checkable
    identity.mount_id = mount_id_at(mount_point) + (swapped ? 1000 : 0);
    return identity;
  }
  int mount_id_at(const std::string& mount_point) const {
    if (auto it = mount_ids.find(mount_point); it != mount_ids.end()) return it->second;
    int id = 0;
    for (const auto& mount : *table)
      if (mount.mount_point == mount_point) id = mount.mount_id;
    return id;
  }
};

Topology disk_topology(const std::string& name, std::uint64_t discard_max) {
  BlockDisk disk;
  disk.name = name;
  disk.size_bytes = 1ull << 30;
  disk.discard_max_bytes = discard_max;
  return Topology{{disk}, {disk}};
}

std::vector<std::string> mount_points(const std::vector<DiscoveredFs>& tracked) {
  std::vector<std::string> out;
  for (const auto& fs : tracked) out.push_back(fs.mount.mount_point);
  return out;
}

class DiscoveryTest : public ::testing::Test {
 protected:
  FakeInventory inventory;
  FakeProber prober;
  std::vector<MountEntry> table = parse_mountinfo(
      "20 1 8:1 / / rw - ext4 /dev/sda1 rw\n"
      "21 20 0:5 / /proc rw - proc proc rw\n"
      "22 20 8:1 /srv /srv rw - ext4 /dev/sda1 rw\n"
      "23 20 8:17 / /data rw - xfs /dev/sdb1 rw\n"
      "24 20 8:33 / /old rw - ext4 /dev/sdc1 rw\n"
      "25 20 8:49 / /archive ro - ext4 /dev/sdd1 ro\n"
      "26 20 8:65 / /scratch rw - ext4 /dev/sde1 rw\n");
  std::vector<FstabEntry> fstab =
      parse_fstab("/dev/sde1 /scratch ext4 defaults,X-trimd.skip 0 2\n");

  void SetUp() override {
    inventory.by_source["/dev/sda1"] = disk_topology("sda", 1u << 30);
    inventory.by_source["/dev/sdb1"] = disk_topology("sdb", 1u << 30);
    inventory.by_source["/dev/sdc1"] = disk_topology("sdc", 0);
    inventory.by_source["/dev/sdd1"] = disk_topology("sdd", 1u << 30);
    inventory.by_source["/dev/sde1"] = disk_topology("sde", 1u << 30);
    prober.uuids["/data"] = "0b6b1b4e-3c8a-4a4e-9a53-1f2f1c8a2b3d";
    prober.table = &table;
  }
};

}  // namespace

TEST_F(DiscoveryTest, TracksEachBlockFilesystemOnceAndListsTheRestWithAReason) {
  const Discovery d = discover_filesystems(table, fstab, inventory, prober);
  EXPECT_THAT(mount_points(d.tracked), ElementsAre("/", "/data", "/old", "/scratch"));
  std::map<std::string, std::string> skipped;
  for (const auto& s : d.skipped) skipped[s.mount.mount_point] = s.reason;
  EXPECT_EQ(skipped.at("/proc"), "pseudo filesystem (proc)");
  EXPECT_EQ(skipped.at("/archive"), "read-only filesystem");
  EXPECT_EQ(skipped.at("/srv"), "another mount of the same filesystem is trimmed");
}

TEST_F(DiscoveryTest, KeepsUntrimmableFilesystemsTrackedWithTheirReason) {
  const Discovery d = discover_filesystems(table, fstab, inventory, prober);
  const DiscoveredFs& old_disk = d.tracked[2];
  ASSERT_EQ(old_disk.mount.mount_point, "/old");
  ASSERT_TRUE(old_disk.unsupported_reason);
  EXPECT_THAT(*old_disk.unsupported_reason, ::testing::HasSubstr("no discard support on sdc"));
  const DiscoveredFs& scratch = d.tracked[3];
  ASSERT_TRUE(scratch.disabled_reason);
  EXPECT_THAT(*scratch.disabled_reason, ::testing::HasSubstr("X-trimd.skip"));
}

TEST_F(DiscoveryTest, NamesFilesystemsByUuidWhenKnownElseBySourceAndMountPoint) {
  const Discovery d = discover_filesystems(table, fstab, inventory, prober);
  EXPECT_EQ(d.tracked[1].id, "uuid-0b6b1b4e-3c8a-4a4e-9a53-1f2f1c8a2b3d");
  EXPECT_EQ(d.tracked[1].uuid, "0b6b1b4e-3c8a-4a4e-9a53-1f2f1c8a2b3d");
  EXPECT_EQ(d.tracked[0].id, "dev-/dev/sda1-/");
}

TEST_F(DiscoveryTest, RecordsTheMountTheMountPointMustKeepAndTheGeometry) {
  const Discovery d = discover_filesystems(table, fstab, inventory, prober);
  EXPECT_EQ(d.tracked[1].root_device, static_cast<dev_t>(std::string("/data").size()));
  EXPECT_EQ(d.tracked[1].identity.device, d.tracked[1].root_device);
  EXPECT_EQ(d.tracked[1].identity.mount_id, 23);
  EXPECT_EQ(d.tracked[1].geometry.fs_type, "xfs");
  EXPECT_EQ(d.tracked[1].geometry.size_bytes, 1ull << 30);
  EXPECT_THAT(d.tracked[1].disk_names(), ElementsAre("sdb"));
}

// Mounted over, or unmounted, after mountinfo was read: the path leads to
// another filesystem (often the one it was mounted on), never to be trimmed
// in its place. Left out this round; the next rescan looks again.
TEST_F(DiscoveryTest, LeavesOutAMountWhosePathLeadsToAnotherMountNow) {
  prober.mount_ids["/data"] = 20;  // the root filesystem's directory /data
  const Discovery d = discover_filesystems(table, fstab, inventory, prober);
  EXPECT_THAT(mount_points(d.tracked), ElementsAre("/", "/old", "/scratch"));
  std::map<std::string, std::string> skipped;
  for (const auto& s : d.skipped) skipped[s.mount.mount_point] = s.reason;
  EXPECT_EQ(skipped.at("/data"), "another mount is at its mount point right now");
}

TEST_F(DiscoveryTest, LeavesOutAMountThatChangedWhileItWasProbed) {
  prober.swapped_while_probed = "/data";
  const Discovery d = discover_filesystems(table, fstab, inventory, prober);
  EXPECT_THAT(mount_points(d.tracked), ElementsAre("/", "/old", "/scratch"));
}

// What systemd-nspawn shows a container of the host's root filesystem.
TEST_F(DiscoveryTest, NeverTracksTheHostsMountsInsideAContainer) {
  table.push_back(parse_mountinfo("30 20 254:0 / /run/host/incoming rw - ext4 /dev/vda rw\n")[0]);
  inventory.by_source["/dev/vda"] = disk_topology("vda", 1u << 30);
  const Discovery d = discover_filesystems(table, fstab, inventory, prober);
  EXPECT_THAT(mount_points(d.tracked), ::testing::Not(::testing::Contains("/run/host/incoming")));
  EXPECT_TRUE(std::any_of(d.skipped.begin(), d.skipped.end(), [](const auto& skipped) {
    return skipped.mount.mount_point == "/run/host/incoming";
  }));
}

TEST_F(DiscoveryTest, SkipsMountsWithNoBlockDeviceBehindThem) {
  inventory.by_source.erase("/dev/sdb1");
  const Discovery d = discover_filesystems(table, fstab, inventory, prober);
  EXPECT_THAT(mount_points(d.tracked), ElementsAre("/", "/old", "/scratch"));
}

// F5: two mounted copies of one image share a UUID and are two filesystems.
class CloneDiscovery : public DiscoveryTest {
 protected:
  void SetUp() override {
    DiscoveryTest::SetUp();
    // The copy on loop1 was mounted before the one on loop0.
    table = parse_mountinfo(
        "30 1 7:1 / /mnt/copy-b rw - ext4 /dev/loop1 rw\n"
        "31 1 7:0 / /mnt/copy-a rw - ext4 /dev/loop0 rw\n");
    inventory.by_source["/dev/loop0"] = disk_topology("loop0", 1u << 30);
    inventory.by_source["/dev/loop1"] = disk_topology("loop1", 1u << 30);
    prober.uuids["/mnt/copy-a"] = "same-uuid";
    prober.uuids["/mnt/copy-b"] = "same-uuid";
  }
  std::vector<DiscoveredFs> discover() {
    return discover_filesystems(table, {}, inventory, prober).tracked;
  }
  // As after `umount mount_point`.
  std::vector<DiscoveredFs> discover_without(const std::string& mount_point) {
    std::vector<MountEntry> mounted = table;
    std::erase_if(mounted, [&](const MountEntry& m) { return m.mount_point == mount_point; });
    return discover_filesystems(mounted, {}, inventory, prober).tracked;
  }
  static constexpr const char* kCopyA = "uuid-same-uuid-dev-/dev/loop0";
  static constexpr const char* kCopyB = "uuid-same-uuid-dev-/dev/loop1";
};

TEST_F(CloneDiscovery, TracksBothCopiesOfOneImageUnderIdsOfTheirOwn) {
  const Discovery d = discover_filesystems(table, {}, inventory, prober);
  ASSERT_EQ(d.tracked.size(), 2u);
  EXPECT_TRUE(d.skipped.empty());
  EXPECT_EQ(d.tracked[0].mount.mount_point, "/mnt/copy-b");
  EXPECT_EQ(d.tracked[0].id, kCopyB);
  EXPECT_EQ(d.tracked[1].id, kCopyA);
}

TEST_F(CloneDiscovery, GivesTheSameIdsWhicheverCopyWasMountedFirst) {
  std::swap(table[0], table[1]);
  const Discovery d = discover_filesystems(table, {}, inventory, prober);
  ASSERT_EQ(d.tracked.size(), 2u);
  EXPECT_EQ(d.tracked[0].mount.mount_point, "/mnt/copy-a");
  EXPECT_EQ(d.tracked[0].id, kCopyA);
  EXPECT_EQ(d.tracked[1].id, kCopyB);
}

TEST_F(CloneDiscovery, KeepsOneStateRecordAndOneCursorPerCopy) {
  const TimePoint now = Clock::from_time_t(1'800'000'000);
  StateMap old_state;  // written before clones were told apart
  old_state["uuid-same-uuid"].cursor = 1u << 20;
  old_state["uuid-same-uuid"].mount_point = "/mnt/copy-a";
  Manager manager(Config{}, old_state, now);
  manager.update_filesystems(discover(), now);
  ASSERT_EQ(manager.statuses(now).size(), 2u);
  EXPECT_EQ(manager.id_for_mount_point("/mnt/copy-a"), kCopyA);
  EXPECT_EQ(manager.id_for_mount_point("/mnt/copy-b"), kCopyB);
  const StateMap saved = manager.persistent_state();
  EXPECT_EQ(saved.count("uuid-same-uuid"), 0u) << "the record went to the copy it was written for";
  ASSERT_EQ(saved.count(kCopyA), 1u);
  ASSERT_EQ(saved.count(kCopyB), 1u);
  EXPECT_EQ(saved.at(kCopyA).cursor, std::optional<std::uint64_t>{1u << 20});
  EXPECT_EQ(saved.at(kCopyB).cursor, std::nullopt);
  EXPECT_EQ(saved.at(kCopyB).mount_point, "/mnt/copy-b");
  EXPECT_EQ(saved.at(kCopyB).device, "/dev/loop1");
  EXPECT_EQ(saved.at(kCopyB).last_seen, now);
}

// Issue 16, item 7: which copies are mounted must not change whose id is whose.
TEST_F(CloneDiscovery, ACopyMountedAloneKeepsItsOwnIdAndNeverTheOtherCopysCursor) {
  const TimePoint now = Clock::from_time_t(1'800'000'000);
  Manager manager(Config{}, {}, now);
  manager.update_filesystems(discover(), now);  // both copies: known as clones from now on
  StateMap state = manager.persistent_state();
  state[kCopyA].cursor = 1u << 20;  // copy a stopped halfway through a pass

  Manager restarted(Config{}, state, now);
  restarted.update_filesystems(discover_without("/mnt/copy-a"), now);
  EXPECT_EQ(restarted.id_for_mount_point("/mnt/copy-b"), kCopyB);
  EXPECT_FALSE(restarted.passes_active()) << "copy b resumed copy a's pass";
  EXPECT_EQ(restarted.persistent_state().at(kCopyA).cursor, std::optional<std::uint64_t>{1u << 20});

  restarted.update_filesystems(discover_without("/mnt/copy-b"), now);
  EXPECT_EQ(restarted.id_for_mount_point("/mnt/copy-a"), kCopyA);
  EXPECT_TRUE(restarted.passes_active()) << "copy a lost its own pass";
}

// A state file of 1caa747: copy a under the plain id, copy b under its clone id.
TEST_F(CloneDiscovery, ARecordFromBeforeStaysWithItsCopyWhenTheOtherIsMountedAlone) {
  const TimePoint now = Clock::from_time_t(1'800'000'000);
  StateMap old_state;
  old_state["uuid-same-uuid"].cursor = 1u << 20;
  old_state["uuid-same-uuid"].mount_point = "/mnt/copy-a";
  old_state[kCopyB].mount_point = "/mnt/copy-b";
  Manager manager(Config{}, old_state, now);

  manager.update_filesystems(discover_without("/mnt/copy-a"), now);
  EXPECT_EQ(manager.id_for_mount_point("/mnt/copy-b"), kCopyB);
  EXPECT_FALSE(manager.passes_active()) << "copy b resumed copy a's pass";
  EXPECT_EQ(manager.persistent_state().at("uuid-same-uuid").cursor,
            std::optional<std::uint64_t>{1u << 20});

  manager.update_filesystems(discover_without("/mnt/copy-b"), now);
  EXPECT_EQ(manager.id_for_mount_point("/mnt/copy-a"), kCopyA);
  EXPECT_TRUE(manager.passes_active());
  EXPECT_EQ(manager.persistent_state().at(kCopyA).cursor, std::optional<std::uint64_t>{1u << 20});
}

TEST_F(CloneDiscovery, AFilesystemNeverSeenClonedKeepsItsPlainUuidId) {
  const TimePoint now = Clock::from_time_t(1'800'000'000);
  Manager manager(Config{}, {}, now);
  manager.update_filesystems(discover_without("/mnt/copy-b"), now);
  EXPECT_EQ(manager.id_for_mount_point("/mnt/copy-a"), "uuid-same-uuid");
  EXPECT_EQ(manager.persistent_state().at("uuid-same-uuid").device, "/dev/loop0");
}
