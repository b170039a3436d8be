#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

#include "mountinfo.hpp"

namespace trimd {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::string data_file(const std::string& name) {
  return read_text(std::string(TRIMD_TEST_DATA) + "/" + name);
}

std::size_t count_lines(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

const MountEntry& at(const std::vector<MountEntry>& table, const std::string& mount_point) {
  const auto it = std::find_if(table.begin(), table.end(),
                               [&](const MountEntry& e) { return e.mount_point == mount_point; });
  if (it == table.end()) throw std::runtime_error("no mount at " + mount_point);
  return *it;
}

const FstabEntry& at(const std::vector<FstabEntry>& table, const std::string& mount_point) {
  const auto it = std::find_if(table.begin(), table.end(),
                               [&](const FstabEntry& e) { return e.mount_point == mount_point; });
  if (it == table.end()) throw std::runtime_error("no fstab entry for " + mount_point);
  return *it;
}

constexpr const char* kLoopMounts = "/tmp/discovery/cap/mnt/";

TEST(MountinfoParser, ParsesEveryFieldOfAPlainLine) {
  const auto table = parse_mountinfo(
      "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue\n");
  ASSERT_EQ(table.size(), 1u);
  const MountEntry& e = table[0];
  EXPECT_EQ(e.mount_id, 36);
  EXPECT_EQ(e.parent_id, 35);
  EXPECT_EQ(e.major, 98u);
  EXPECT_EQ(e.minor, 0u);
  EXPECT_EQ(e.root, "/mnt1");
  EXPECT_EQ(e.mount_point, "/mnt2");
  EXPECT_THAT(e.mount_options, ElementsAre("rw", "noatime"));
  EXPECT_THAT(e.optional_fields, ElementsAre("master:1"));
  EXPECT_EQ(e.fs_type, "ext3");
  EXPECT_EQ(e.source, "/dev/root");
  EXPECT_THAT(e.super_options, ElementsAre("rw", "errors=continue"));
}

TEST(MountinfoParser, CollectsAllOptionalFieldsUpToTheSeparator) {
  const auto table = parse_mountinfo(data_file("mountinfo-desktop.txt"));
  EXPECT_THAT(at(table, "/media/ana/USB STICK").optional_fields,
              ElementsAre("shared:55", "master:3", "propagate_from:2"));
  EXPECT_THAT(at(table, "/mnt/scratch").optional_fields, ElementsAre("unbindable"));
  EXPECT_EQ(at(table, "/media/ana/USB STICK").fs_type, "vfat");
}

TEST(MountinfoParser, ParsesLinesWithNoOptionalFields) {
  const auto table = parse_mountinfo(data_file("mountinfo-this-machine.txt"));
  const MountEntry& root = at(table, "/");
  EXPECT_THAT(root.optional_fields, IsEmpty());
  EXPECT_EQ(root.fs_type, "ext4");
  EXPECT_EQ(root.source, "/dev/vda");
  EXPECT_TRUE(root.has_option("discard"));
}

TEST(MountinfoParser, ReadsPropagationFieldsOfARealCapture) {
  const auto table = parse_mountinfo(data_file("mountinfo-loops.txt"));
  const std::string base = kLoopMounts;
  EXPECT_THAT(at(table, base + "shared").optional_fields, ElementsAre("shared:1"));
  EXPECT_THAT(at(table, base + "slave").optional_fields, ElementsAre("master:1"));
}

TEST(MountinfoParser, UnescapesOctalSpacesInMountPoints) {
  const auto table = parse_mountinfo(data_file("mountinfo-loops.txt"));
  const MountEntry& disk = at(table, std::string(kLoopMounts) + "My Disk");
  EXPECT_EQ(disk.fs_type, "ext4");
  EXPECT_EQ(disk.major, 7u);
}

TEST(MountinfoParser, UnescapesTabsNewlinesAndBackslashesInMountPointsAndSources) {
  const auto table = parse_mountinfo(data_file("mountinfo-loops.txt"));
  const std::string base = kLoopMounts;
  EXPECT_EQ(at(table, base + "tab\there").source, "name with\ttab");
  EXPECT_EQ(at(table, base + "new\nline").fs_type, "tmpfs");
  EXPECT_EQ(at(table, base + "back\\slash").fs_type, "tmpfs");
}

TEST(MountinfoParser, UnescapesTheRootField) {
  const auto table = parse_mountinfo("40 1 8:1 /a\\040dir /mnt/x rw - ext4 /dev/sda1 rw\n");
  ASSERT_EQ(table.size(), 1u);
  EXPECT_EQ(table[0].root, "/a dir");
}

TEST(MountinfoParser, KeepsTheRootOfABindMount) {
  const auto table = parse_mountinfo(data_file("mountinfo-loops.txt"));
  const std::string base = kLoopMounts;
  const MountEntry& bind = at(table, base + "bind");
  const MountEntry& origin = at(table, base + "My Disk");
  EXPECT_EQ(bind.root, "/data");
  EXPECT_EQ(origin.root, "/");
  EXPECT_EQ(bind.major, origin.major);
  EXPECT_EQ(bind.minor, origin.minor);
  // Read-only per mount, but the superblock stays writable: still trimmable.
  EXPECT_TRUE(std::find(bind.mount_options.begin(), bind.mount_options.end(), "ro") !=
              bind.mount_options.end());
  EXPECT_FALSE(bind.read_only());
  EXPECT_FALSE(origin.read_only());
}

TEST(MountinfoParser, ReadsBtrfsSubvolumesFromRootAndSuperOptions) {
  const auto table = parse_mountinfo(data_file("mountinfo-loops.txt"));
  const std::string base = kLoopMounts;
  const MountEntry& top = at(table, base + "btrfs");
  const MountEntry& home = at(table, base + "home");
  EXPECT_EQ(top.root, "/@");
  EXPECT_EQ(home.root, "/@home");
  EXPECT_THAT(home.super_options, ::testing::Contains("subvol=/@home"));
  // Subvolumes share one anonymous superblock number.
  EXPECT_EQ(top.major, 0u);
  EXPECT_EQ(top.minor, home.minor);
}

TEST(MountinfoParser, SkipsLinesThatDoNotParseAndKeepsTheRest) {
  const auto table = parse_mountinfo(
      "1 0 8:1 / / rw - ext4 /dev/sda1 rw\n"
      "garbage\n"
      "2 1 8:2 / /no-separator rw ext4 /dev/sda2 rw\n"
      "x 1 8:3 / /bad-id rw - ext4 /dev/sda3 rw\n"
      "4 1 8-4 / /bad-devno rw - ext4 /dev/sda4 rw\n"
      "5 1 8:5 / /extra rw - ext4 /dev/sda5 rw surplus\n"
      "\n"
      "6 1 8:6 / /good rw shared:1 - ext4 /dev/sda6 rw\n");
  ASSERT_EQ(table.size(), 2u);
  EXPECT_EQ(table[0].mount_point, "/");
  EXPECT_EQ(table[1].mount_point, "/good");
}

TEST(MountinfoParser, AcceptsCrLfAndAMissingFinalNewline) {
  const auto table = parse_mountinfo(
      "1 0 8:1 / / rw - ext4 /dev/sda1 rw\r\n2 1 8:2 / /b rw - xfs /dev/sda2 rw,noquota");
  ASSERT_EQ(table.size(), 2u);
  EXPECT_THAT(table[0].super_options, ElementsAre("rw"));
  EXPECT_THAT(table[1].super_options, ElementsAre("rw", "noquota"));
}

TEST(MountinfoParser, ParsesEveryLineOfTheCapturedTables) {
  for (const char* name :
       {"mountinfo-this-machine.txt", "mountinfo-loops.txt", "mountinfo-desktop.txt"}) {
    const std::string text = data_file(name);
    ASSERT_FALSE(text.empty()) << name;
    EXPECT_EQ(parse_mountinfo(text).size(), count_lines(text)) << name;
  }
}

TEST(MountinfoParser, ParsesEveryLineOfThisProcessesLiveTable) {
  const std::string text = read_text("/proc/self/mountinfo");
  const auto table = parse_mountinfo(text);
  // Not at(table, "/"): in a build chroot "/" need not be a mount point.
  EXPECT_FALSE(table.empty());
  EXPECT_EQ(table.size(), count_lines(text));
}

TEST(MountEntry, HasOptionMatchesBareNamesAndNameValuePairs) {
  const auto table = parse_mountinfo(data_file("mountinfo-desktop.txt"));
  const MountEntry& home = at(table, "/home");
  EXPECT_TRUE(home.has_option("noatime"));  // mount option
  EXPECT_TRUE(home.has_option("discard"));  // discard=async, superblock option
  EXPECT_TRUE(home.has_option("subvol"));   // subvol=/@home
  EXPECT_FALSE(home.has_option("disc"));    // a prefix is not a name
}

TEST(MountEntry, IsReadOnlyOnlyWhenTheSuperblockIs) {
  const auto table = parse_mountinfo(
      "1 0 8:1 / /a ro - ext4 /dev/sda1 rw\n"
      "2 0 8:2 / /b rw - ext4 /dev/sda2 ro\n"
      "3 0 8:3 / /c rw,relatime - ext4 /dev/sda3 rw,errors=remount-ro\n");
  ASSERT_EQ(table.size(), 3u);
  EXPECT_FALSE(table[0].read_only()) << "a read-only mount of a writable filesystem";
  EXPECT_TRUE(table[1].read_only());
  EXPECT_FALSE(table[2].read_only());
}

TEST(UnescapeOctal, DecodesTheFourEscapesTheKernelWrites) {
  EXPECT_EQ(unescape_octal("a\\040b\\011c\\012d\\134e"), "a b\tc\nd\\e");
}

TEST(UnescapeOctal, LeavesLoneBackslashesAndShortOrNonOctalEscapesAlone) {
  EXPECT_EQ(unescape_octal("a\\b"), "a\\b");
  EXPECT_EQ(unescape_octal("end\\04"), "end\\04");
  EXPECT_EQ(unescape_octal("\\089"), "\\089");
  EXPECT_EQ(unescape_octal("trailing\\"), "trailing\\");
}

TEST(FstabParser, SkipsCommentsBlankLinesAndMalformedLines) {
  const auto fstab = parse_fstab(data_file("fstab-desktop.txt"));
  std::vector<std::string> mount_points;
  for (const auto& e : fstab) mount_points.push_back(e.mount_point);
  EXPECT_THAT(mount_points,
              ElementsAre("/", "/home", "/boot/efi", "/srv/My Photos", "/var/lib/libvirt/",
                          "/mnt/backup", "/mnt/scratch", "none", "/mnt/nas", "/tmp"));
}

TEST(FstabParser, ReadsTabSeparatedFieldsAndUnescapesMountPoints) {
  const auto fstab = parse_fstab(data_file("fstab-desktop.txt"));
  const FstabEntry& photos = at(fstab, "/srv/My Photos");
  EXPECT_EQ(photos.source, "LABEL=photos");
  EXPECT_EQ(photos.fs_type, "ext4");
  EXPECT_THAT(photos.options, ElementsAre("defaults", "X-trimd.skip"));
}

TEST(FstabParser, FillsInDefaultsForMissingTrailingFields) {
  const auto fstab = parse_fstab(data_file("fstab-desktop.txt"));
  EXPECT_THAT(at(fstab, "/mnt/scratch").options, ElementsAre("defaults"));
  EXPECT_EQ(at(fstab, "/mnt/scratch").fs_type, "ext4");
  EXPECT_EQ(at(fstab, "/tmp").fs_type, "auto");
  EXPECT_THAT(at(fstab, "/tmp").options, ElementsAre("defaults"));
  EXPECT_THAT(at(fstab, "/mnt/backup").options, ElementsAre("ro", "nofail"));
}

TEST(FstabParser, UnescapesSourcesToo) {
  const auto fstab = parse_fstab("/srv/images/disk\\040one.img /mnt/one ext4 loop 0 0\n");
  ASSERT_EQ(fstab.size(), 1u);
  EXPECT_EQ(fstab[0].source, "/srv/images/disk one.img");
}

TEST(FstabParser, RejectsNonNumericDumpAndPassFieldsAndSurplusFields) {
  EXPECT_THAT(parse_fstab("/dev/sdf1 /mnt/odd ext4 defaults zero 2\n"), IsEmpty());
  EXPECT_THAT(parse_fstab("/dev/sdf1 /mnt/odd ext4 defaults 0 2 7\n"), IsEmpty());
  EXPECT_EQ(parse_fstab("/dev/sdf1 /mnt/odd ext4 defaults 0 2\n").size(), 1u);
}

}  // namespace
}  // namespace trimd
