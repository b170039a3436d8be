#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

#include "filters.hpp"

namespace trimd {
namespace {

using ::testing::ElementsAre;
using ::testing::Optional;
using ::testing::UnorderedElementsAre;

std::string data_file(const std::string& name) {
  std::ifstream in(std::string(TRIMD_TEST_DATA) + "/" + name);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

const std::vector<MountEntry>& desktop() {
  static const auto table = parse_mountinfo(data_file("mountinfo-desktop.txt"));
  return table;
}

const std::vector<MountEntry>& loops() {
  static const auto table = parse_mountinfo(data_file("mountinfo-loops.txt"));
  return table;
}

const std::vector<FstabEntry>& desktop_fstab() {
  static const auto table = parse_fstab(data_file("fstab-desktop.txt"));
  return table;
}

// The last entry at `mount_point`: the visible one when several are stacked.
const MountEntry& at(const std::vector<MountEntry>& table, const std::string& mount_point) {
  const auto it = std::find_if(table.rbegin(), table.rend(),
                               [&](const MountEntry& e) { return e.mount_point == mount_point; });
  if (it == table.rend()) throw std::runtime_error("no mount at " + mount_point);
  return *it;
}

const MountEntry& by_id(const std::vector<MountEntry>& table, int mount_id) {
  const auto it = std::find_if(table.begin(), table.end(),
                               [&](const MountEntry& e) { return e.mount_id == mount_id; });
  if (it == table.end()) throw std::runtime_error("no mount " + std::to_string(mount_id));
  return *it;
}

MountEntry mount_of_type(const std::string& fs_type) {
  MountEntry mount;
  mount.mount_point = "/mnt/x";
  mount.fs_type = fs_type;
  mount.mount_options = {"rw"};
  mount.super_options = {"rw"};
  return mount;
}

BlockDisk disk(const std::string& name, std::uint64_t discard_max_bytes) {
  BlockDisk d;
  d.name = name;
  d.discard_max_bytes = discard_max_bytes;
  d.discard_granularity = discard_max_bytes ? 4096 : 0;
  return d;
}

Topology topology_of(std::vector<BlockDisk> devices) {
  Topology t;
  t.devices = devices;
  t.disks = std::move(devices);
  return t;
}

TEST(SkipReadOnly, SkipsReadOnlyFilesystemsButNotReadOnlyMountsOfWritableOnes) {
  EXPECT_THAT(skip_read_only(at(desktop(), "/mnt/backup")),
              Optional(std::string("read-only filesystem")));
  EXPECT_EQ(skip_read_only(at(loops(), "/tmp/discovery/cap/mnt/bind")), std::nullopt);
  EXPECT_EQ(skip_read_only(at(desktop(), "/home")), std::nullopt);
}

TEST(SkipPseudoFs, NamesThePseudoFilesystemType) {
  for (const char* type :
       {"proc",     "sysfs",      "devtmpfs",   "devpts",   "tmpfs",    "ramfs",
        "cgroup",   "cgroup2",    "securityfs", "debugfs",  "tracefs",  "pstore",
        "bpf",      "mqueue",     "hugetlbfs",  "configfs", "fusectl",  "binfmt_misc",
        "efivarfs", "rpc_pipefs", "nsfs",       "overlay",  "squashfs", "iso9660"}) {
    EXPECT_THAT(skip_pseudo_fs(mount_of_type(type)),
                Optional("pseudo filesystem (" + std::string(type) + ")"));
  }
}

TEST(SkipPseudoFs, PassesFilesystemsOnBlockDevices) {
  for (const char* type : {"ext4", "xfs", "btrfs", "vfat", "f2fs", "fuseblk"})
    EXPECT_EQ(skip_pseudo_fs(mount_of_type(type)), std::nullopt) << type;
}

TEST(SkipNetworkFs, NamesTheNetworkFilesystemType) {
  EXPECT_THAT(skip_network_fs(at(desktop(), "/mnt/nas")),
              Optional(std::string("network filesystem (nfs4)")));
  for (const char* type : {"nfs", "cifs", "smb3", "ceph", "9p", "glusterfs", "virtiofs"})
    EXPECT_THAT(skip_network_fs(mount_of_type(type)),
                Optional("network filesystem (" + std::string(type) + ")"));
  EXPECT_EQ(skip_network_fs(at(desktop(), "/home/ana/remote")), std::nullopt);
}

TEST(SkipSpecialFs, SkipsSwapAutofsAndFuse) {
  EXPECT_THAT(skip_special_fs(at(desktop(), "/home/ana/remote")),
              Optional(std::string("FUSE filesystem (fuse.sshfs)")));
  EXPECT_THAT(skip_special_fs(at(desktop(), "/net")), Optional(std::string("autofs")));
  EXPECT_THAT(skip_special_fs(mount_of_type("swap")), Optional(std::string("swap")));
  EXPECT_THAT(skip_special_fs(mount_of_type("fuse")),
              Optional(std::string("FUSE filesystem (fuse)")));
}

TEST(SkipSpecialFs, LeavesFuseOnABlockDeviceToTheDiscardCheck) {
  EXPECT_EQ(skip_special_fs(mount_of_type("fuseblk")), std::nullopt);
  EXPECT_EQ(skip_special_fs(at(desktop(), "/")), std::nullopt);
}

TEST(SkipOvermounted, SkipsTheMountHiddenUnderAChildAtTheSameMountPoint) {
  EXPECT_THAT(skip_overmounted(by_id(desktop(), 92), desktop()),
              Optional(std::string("over-mounted by another mount at /mnt/scratch")));
  EXPECT_EQ(skip_overmounted(by_id(desktop(), 94), desktop()), std::nullopt);
}

TEST(SkipOvermounted, FindsTheHiddenMountsOfRealCaptures) {
  const auto machine = parse_mountinfo(data_file("mountinfo-this-machine.txt"));
  std::vector<std::string> hidden;
  for (const auto& mount : machine)
    if (skip_overmounted(mount, machine)) hidden.push_back(mount.mount_point);
  EXPECT_THAT(hidden, UnorderedElementsAre("/dev/shm", "/dev/pts"));

  std::vector<const MountEntry*> hidden_loops;
  for (const auto& mount : loops())
    if (skip_overmounted(mount, loops())) hidden_loops.push_back(&mount);
  const MountEntry& on_top = at(loops(), "/tmp/discovery/cap/mnt/hidden");
  ASSERT_EQ(hidden_loops.size(), 3u);
  const auto under =
      std::find_if(hidden_loops.begin(), hidden_loops.end(),
                   [&](const MountEntry* m) { return m->mount_point == on_top.mount_point; });
  ASSERT_NE(under, hidden_loops.end());
  EXPECT_EQ((*under)->mount_id, on_top.parent_id);
  EXPECT_EQ((*under)->fs_type, "tmpfs");
  EXPECT_EQ(on_top.fs_type, "ext4");
}

TEST(SkipOvermounted, TrustsParentIdsOverTableOrder) {
  // The mount on top is listed first; its parent id says it sits on 20.
  const auto table = parse_mountinfo(
      "21 20 8:2 / /srv rw - ext4 /dev/sda2 rw\n"
      "20 1 8:1 / /srv rw - ext4 /dev/sda1 rw\n");
  ASSERT_EQ(table.size(), 2u);
  EXPECT_EQ(skip_overmounted(table[0], table), std::nullopt);
  EXPECT_TRUE(skip_overmounted(table[1], table).has_value());
}

TEST(SkipOvermounted, FallsBackToTableOrderWithoutMountIds) {
  std::vector<MountEntry> table = {mount_of_type("ext4"), mount_of_type("xfs")};
  EXPECT_TRUE(skip_overmounted(table[0], table).has_value());
  EXPECT_EQ(skip_overmounted(table[1], table), std::nullopt);
  // A copy of an entry is found by identity, not only by address.
  const MountEntry copy = table[0];
  EXPECT_TRUE(skip_overmounted(copy, table).has_value());
}

TEST(SkipOvermounted, IgnoresMountsBelowOrBesideIt) {
  EXPECT_EQ(skip_overmounted(at(desktop(), "/"), desktop()), std::nullopt);
  EXPECT_EQ(skip_overmounted(at(desktop(), "/run"), desktop()), std::nullopt);
}

TEST(SkipOptedOut, HonoursOptionsOnTheMountItself) {
  MountEntry mount = mount_of_type("ext4");
  mount.mount_options.push_back("X-trimd.skip");
  EXPECT_THAT(skip_opted_out(mount, {}), Optional(std::string("opted out with X-trimd.skip")));
  mount.mount_options.back() = "X-fstrim.notrim";
  EXPECT_THAT(skip_opted_out(mount, {}), Optional(std::string("opted out with X-fstrim.notrim")));
}

TEST(SkipOptedOut, HonoursTheFstabEntryWithTheSameMountPoint) {
  EXPECT_THAT(skip_opted_out(at(desktop(), "/srv/My Photos"), desktop_fstab()),
              Optional(std::string("opted out with X-trimd.skip")));
  // fstab writes "/var/lib/libvirt/" and the lower-case spelling.
  EXPECT_THAT(skip_opted_out(at(desktop(), "/var/lib/libvirt"), desktop_fstab()),
              Optional(std::string("opted out with x-fstrim.notrim")));
}

TEST(SkipOptedOut, IgnoresFstabEntriesOfOtherMountPoints) {
  // A bind mount of the opted-out filesystem elsewhere is judged by its own entry.
  EXPECT_EQ(skip_opted_out(at(desktop(), "/home/ana/2024"), desktop_fstab()), std::nullopt);
  EXPECT_EQ(skip_opted_out(at(desktop(), "/home"), desktop_fstab()), std::nullopt);
}

TEST(ListedInFstab, MatchesTheMountPointWhateverTheTrailingSlashOrEscapes) {
  EXPECT_TRUE(listed_in_fstab(at(desktop(), "/home"), desktop_fstab()));
  EXPECT_TRUE(listed_in_fstab(at(desktop(), "/var/lib/libvirt"), desktop_fstab()));
  EXPECT_TRUE(listed_in_fstab(at(desktop(), "/srv/My Photos"), desktop_fstab()));
}

TEST(ListedInFstab, LeavesOutMountsFstabDoesNotList) {
  EXPECT_FALSE(listed_in_fstab(at(desktop(), "/home/ana/2024"), desktop_fstab()));
  EXPECT_FALSE(listed_in_fstab(at(desktop(), "/home"), {}));
}

TEST(SkipNoDiscard, SkipsFilesystemsWithNoBlockDevice) {
  EXPECT_THAT(skip_no_discard(Topology{}), Optional(std::string("no block device")));
}

TEST(SkipNoDiscard, NamesTheDeviceWhoseQueueRefusesDiscard) {
  EXPECT_THAT(skip_no_discard(topology_of({disk("loop3", 0)})),
              Optional(std::string("no discard support on loop3 (queue/discard_max_bytes is 0)")));
  EXPECT_THAT(
      skip_no_discard(topology_of({disk("sda", 0), disk("sdb", 0)})),
      Optional(std::string("no discard support on sda, sdb (queue/discard_max_bytes is 0)")));
}

TEST(SkipNoDiscard, PassesWhenAnyDeviceSupportsDiscard) {
  EXPECT_EQ(skip_no_discard(topology_of({disk("sda", 0), disk("nvme0n1", 2199023255040)})),
            std::nullopt);
}

TEST(SkipContainerHostMount, SkipsRunHostAndEverythingBelowIt) {
  for (const char* path :
       {"/run/host", "/run/host/", "/run/host/incoming", "/run/host/os-release"}) {
    MountEntry mount = mount_of_type("ext4");
    mount.mount_point = path;
    EXPECT_TRUE(skip_container_host_mount(mount).has_value()) << path;
  }
}

TEST(SkipContainerHostMount, PassesLookAlikePaths) {
  for (const char* path : {"/run/hostname", "/run", "/srv/run/host", "/"}) {
    MountEntry mount = mount_of_type("ext4");
    mount.mount_point = path;
    EXPECT_EQ(skip_container_host_mount(mount), std::nullopt) << path;
  }
}

TEST(FirstSkipReason, SkipsTheHostsMountsInsideAContainer) {
  MountEntry mount = mount_of_type("ext4");
  mount.mount_point = "/run/host/incoming";
  const auto reason = first_skip_reason(mount, {mount}, {}, topology_of({disk("vda", 1 << 30)}));
  ASSERT_TRUE(reason.has_value());
  EXPECT_EQ(reason, skip_container_host_mount(mount));
}

TEST(FirstSkipReason, ChecksReadOnlyFirst) {
  MountEntry mount = mount_of_type("tmpfs");
  mount.super_options = {"ro"};
  EXPECT_THAT(first_skip_reason(mount, {mount}, {}, Topology{}),
              Optional(std::string("read-only filesystem")));
}

TEST(FirstSkipReason, LeavesOnlyTrimmableBlockFilesystemsOfADesktop) {
  const Topology ssd = topology_of({disk("nvme0n1", 2199023255040)});
  std::vector<std::string> kept;
  for (const auto& mount : desktop())
    if (!first_skip_reason(mount, desktop(), desktop_fstab(), ssd))
      kept.push_back(mount.mount_point);
  EXPECT_THAT(kept, ElementsAre("/", "/home", "/boot/efi", "/home/ana/2024", "/media/ana/USB STICK",
                                "/mnt/scratch"));
}

TEST(FirstSkipReason, ReportsMissingDiscardLast) {
  const MountEntry& root = at(desktop(), "/");
  EXPECT_THAT(first_skip_reason(root, desktop(), desktop_fstab(), topology_of({disk("sda", 0)})),
              Optional(std::string("no discard support on sda (queue/discard_max_bytes is 0)")));
}

std::vector<std::string> kept_mount_points(const std::vector<MountEntry>& table) {
  std::vector<std::string> kept;
  for (const std::size_t i : one_mount_per_filesystem(table)) kept.push_back(table[i].mount_point);
  return kept;
}

TEST(OneMountPerFilesystem, PrefersTheFilesystemRootOverAShorterBindMount) {
  const auto kept = kept_mount_points(loops());
  EXPECT_THAT(kept, ::testing::Contains("/tmp/discovery/cap/mnt/My Disk"));
  EXPECT_THAT(kept, ::testing::Not(::testing::Contains("/tmp/discovery/cap/mnt/bind")));
}

TEST(OneMountPerFilesystem, KeepsTheShortestMountPointOfBtrfsSubvolumes) {
  const auto kept = kept_mount_points(desktop());
  EXPECT_THAT(kept, ::testing::Contains("/"));
  EXPECT_THAT(kept, ::testing::Not(::testing::Contains("/home")));
  EXPECT_THAT(kept, ::testing::Contains("/srv/My Photos"));
  EXPECT_THAT(kept, ::testing::Not(::testing::Contains("/home/ana/2024")));
}

TEST(OneMountPerFilesystem, KeepsOneEntryPerDeviceNumberInTableOrder) {
  const auto indexes = one_mount_per_filesystem(desktop());
  EXPECT_TRUE(std::is_sorted(indexes.begin(), indexes.end()));
  std::vector<std::pair<unsigned, unsigned>> devices;
  for (const std::size_t i : indexes) devices.emplace_back(desktop()[i].major, desktop()[i].minor);
  std::sort(devices.begin(), devices.end());
  EXPECT_EQ(std::adjacent_find(devices.begin(), devices.end()), devices.end());
  // /srv/My Photos + its bind, / + /home: two fewer than the table.
  EXPECT_EQ(indexes.size(), desktop().size() - 2);
}

TEST(OneMountPerFilesystem, BreaksTiesByTheFirstLine) {
  const auto table = parse_mountinfo(
      "30 1 8:1 / /aa rw - ext4 /dev/sda1 rw\n"
      "31 1 8:1 / /bb rw - ext4 /dev/sda1 rw\n");
  EXPECT_THAT(one_mount_per_filesystem(table), ElementsAre(0u));
}

TEST(OneMountPerFilesystem, TakesEntriesWithoutADeviceNumberAsDistinct) {
  const std::vector<MountEntry> table = {mount_of_type("ext4"), mount_of_type("ext4")};
  EXPECT_THAT(one_mount_per_filesystem(table), ElementsAre(0u, 1u));
}

}  // namespace
}  // namespace trimd
