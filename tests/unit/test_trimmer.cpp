// The two kernel adapters (FITRIM and the filesystem prober), as far as they
// can be exercised without root. Real trims on real filesystems are in
// tests/system/test_loopfs.cpp.
#include <gtest/gtest.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>

#include "fs_probe.hpp"
#include "mountinfo.hpp"
#include "trimmer.hpp"

namespace trimd {
namespace {

namespace fs = std::filesystem;

// A fresh directory under $TMPDIR, removed with everything in it.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (fs::temp_directory_path() / "test_trimmer-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }
  fs::path touch(const std::string& name) const {
    std::ofstream(path_ / name) << name;
    return path_ / name;
  }

 private:
  fs::path path_;
};

dev_t device_of(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_dev;
}

bool filesystem_is(const std::string& path, long magic) {
  struct statfs st {};
  return ::statfs(path.c_str(), &st) == 0 && st.f_type == magic;
}

TrimOutcome trim_everything(const TrimTarget& target) {
  return fitrim(target, TrimRange{0, UINT64_MAX, 0});
}

TEST(TrimStatusNames, AreDistinctLowerCaseWords) {
  const std::set<std::string> names = {
      to_string(TrimStatus::Ok), to_string(TrimStatus::Unsupported), to_string(TrimStatus::PastEnd),
      to_string(TrimStatus::Gone), to_string(TrimStatus::Error)};
  EXPECT_EQ(names.size(), 5u);
  EXPECT_EQ(names.count("ok"), 1u);
  EXPECT_EQ(names.count("past-end"), 1u);
}

TEST(ClassifyTrimErrno, TreatsMissingSupportAsUnsupported) {
  for (int error : {EOPNOTSUPP, ENOTTY, ENOSYS, EBADF})
    EXPECT_EQ(classify_trim_errno(error), TrimStatus::Unsupported) << std::strerror(error);
}

TEST(ClassifyTrimErrno, TreatsVanishedMountsAsGone) {
  for (int error : {ENOENT, ENODEV, ENXIO, ESTALE, ENOTDIR, EROFS})
    EXPECT_EQ(classify_trim_errno(error), TrimStatus::Gone) << std::strerror(error);
}

TEST(ClassifyTrimErrno, TreatsEverythingElseAsError) {
  for (int error : {EIO, EPERM, EACCES, ENOMEM, EBUSY, EFAULT})
    EXPECT_EQ(classify_trim_errno(error), TrimStatus::Error) << std::strerror(error);
}

TEST(ClassifyTrimErrno, ReadsInvalidArgumentAtStartZeroAsError) {
  EXPECT_EQ(classify_trim_errno(EINVAL), TrimStatus::Error);
  EXPECT_EQ(classify_trim_errno(EINVAL, 0), TrimStatus::Error);
}

TEST(ClassifyTrimErrno, ReadsInvalidArgumentPastStartZeroAsPastEnd) {
  EXPECT_EQ(classify_trim_errno(EINVAL, 4096), TrimStatus::PastEnd);
  EXPECT_EQ(classify_trim_errno(EINVAL, UINT64_MAX - 1), TrimStatus::PastEnd);
}

TEST(ClassifyTrimErrno, IgnoresTheStartForOtherErrors) {
  EXPECT_EQ(classify_trim_errno(ENOTTY, 1u << 30), TrimStatus::Unsupported);
  EXPECT_EQ(classify_trim_errno(ENOENT, 1u << 30), TrimStatus::Gone);
  EXPECT_EQ(classify_trim_errno(EIO, 1u << 30), TrimStatus::Error);
}

// This machine's / may well support FITRIM; pseudo filesystems never do.
TEST(Fitrim, ReportsUnsupportedOnProc) {
  ASSERT_TRUE(filesystem_is("/proc", PROC_SUPER_MAGIC));
  const TrimOutcome outcome = trim_everything(TrimTarget{"/proc", 0});
  EXPECT_EQ(outcome.status, TrimStatus::Unsupported) << outcome.message;
  EXPECT_EQ(outcome.bytes_reported, 0u);
  EXPECT_NE(outcome.error, 0);
}

TEST(Fitrim, ReportsUnsupportedOnTmpfs) {
  if (!filesystem_is("/dev/shm", TMPFS_MAGIC)) GTEST_SKIP() << "/dev/shm is not a tmpfs here";
  const TrimOutcome outcome = trim_everything(TrimTarget{"/dev/shm", 0});
  EXPECT_EQ(outcome.status, TrimStatus::Unsupported) << outcome.message;
}

TEST(Fitrim, NamesTheMountPointAndTheErrorInItsMessage) {
  const TrimOutcome outcome = trim_everything(TrimTarget{"/proc", 0});
  EXPECT_NE(outcome.message.find("FITRIM on /proc failed"), std::string::npos) << outcome.message;
  EXPECT_NE(outcome.message.find(std::strerror(outcome.error)), std::string::npos)
      << outcome.message;
}

TEST(Fitrim, ReportsAMissingMountPointAsGone) {
  ScratchDir scratch;
  const std::string missing = (scratch.path() / "not-there").string();
  const TrimOutcome outcome = trim_everything(TrimTarget{missing, 0});
  EXPECT_EQ(outcome.status, TrimStatus::Gone);
  EXPECT_EQ(outcome.error, ENOENT);
  EXPECT_NE(outcome.message.find(missing), std::string::npos) << outcome.message;
}

TEST(Fitrim, ReportsAMountPointReplacedByAFileAsGone) {
  ScratchDir scratch;
  const TrimOutcome outcome = trim_everything(TrimTarget{scratch.touch("file").string(), 0});
  EXPECT_EQ(outcome.status, TrimStatus::Gone);
  EXPECT_EQ(outcome.error, ENOTDIR);
}

// An unmounted mount point is a directory of the parent filesystem: the
// device check must refuse it before FITRIM trims the wrong filesystem.
TEST(Fitrim, RefusesAMountPointThatIsNowAnotherFilesystem) {
  const dev_t elsewhere = device_of("/");
  ASSERT_NE(elsewhere, device_of("/proc"));
  const TrimOutcome outcome = trim_everything(TrimTarget{"/proc", elsewhere});
  EXPECT_EQ(outcome.status, TrimStatus::Gone) << outcome.message;
  EXPECT_EQ(outcome.error, ESTALE);
  EXPECT_NE(outcome.message.find("/proc"), std::string::npos) << outcome.message;
}

TEST(Fitrim, GoesAheadWhenTheDeviceStillMatches) {
  const TrimOutcome outcome = trim_everything(TrimTarget{"/proc", device_of("/proc")});
  EXPECT_EQ(outcome.status, TrimStatus::Unsupported) << outcome.message;
}

// mountinfo's mount id of the mount at `mount_point` (the last one there).
int mountinfo_id_of(const std::string& mount_point) {
  std::ifstream in("/proc/self/mountinfo");
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  int id = 0;
  for (const auto& mount : parse_mountinfo(text))
    if (mount.mount_point == mount_point) id = mount.mount_id;
  return id;
}

TEST(SystemFsProber, IdentifiesTheMountAtAPathAsMountinfoNumbersIt) {
  const MountIdentity proc = SystemFsProber().identify("/proc");
  EXPECT_EQ(proc.mount_id, mountinfo_id_of("/proc"));
  EXPECT_EQ(proc.device, device_of("/proc"));
  EXPECT_EQ(proc.fs_magic, PROC_SUPER_MAGIC);
  EXPECT_EQ(SystemFsProber().identify("/proc"), proc) << "the same mount, the same identity";
  EXPECT_EQ(SystemFsProber().identify("/proc/self/fd"), MountIdentity{})
      << "a symbolic link in the path is refused, not followed";
}

TEST(Fitrim, GoesAheadWhenTheWholeMountIdentityMatches) {
  const TrimOutcome outcome =
      trim_everything(TrimTarget{"/proc", SystemFsProber().identify("/proc")});
  EXPECT_EQ(outcome.status, TrimStatus::Unsupported) << outcome.message;
}

// The same device but another mount: a bind mount, or the filesystem
// unmounted and mounted again. Only the mount discovery chose is trimmed.
TEST(Fitrim, RefusesAnotherMountOfTheSameDevice) {
  MountIdentity other = SystemFsProber().identify("/proc");
  other.mount_id += 1;
  const TrimOutcome outcome = trim_everything(TrimTarget{"/proc", other});
  EXPECT_EQ(outcome.status, TrimStatus::Gone) << outcome.message;
  EXPECT_EQ(outcome.error, ESTALE);
  other = SystemFsProber().identify("/proc");
  other.unique_id += 1;
  EXPECT_EQ(trim_everything(TrimTarget{"/proc", other}).status, TrimStatus::Gone);
  other = SystemFsProber().identify("/proc");
  other.fs_magic = EXT4_SUPER_MAGIC;
  EXPECT_EQ(trim_everything(TrimTarget{"/proc", other}).status, TrimStatus::Gone);
}

// A directory of the mount point's path swapped for a symlink leads
// elsewhere: never followed.
TEST(Fitrim, NeverFollowsASymbolicLinkInTheMountPointsPath) {
  ScratchDir scratch;
  fs::create_directory_symlink("/proc", scratch.path() / "link");
  const TrimOutcome outcome = trim_everything(TrimTarget{(scratch.path() / "link").string(), 0});
  EXPECT_EQ(outcome.status, TrimStatus::Gone) << outcome.message;  // ENOTDIR: not a directory
  const std::string through = (scratch.path() / "link" / "self").string();
  const TrimOutcome inside = trim_everything(TrimTarget{through, 0});
  EXPECT_EQ(inside.status, TrimStatus::Gone) << inside.message;
  EXPECT_EQ(inside.error, ELOOP);
}

TEST(CompareIdentity, ChecksOnlyTheFieldsThatAreKnown) {
  const MountIdentity expected{10, 20, 30, 40};
  EXPECT_EQ(compare_identity(expected, expected), IdentityMismatch::None);
  EXPECT_EQ(compare_identity(expected, {11, 20, 30, 40}), IdentityMismatch::Device);
  EXPECT_EQ(compare_identity(expected, {10, 21, 30, 40}), IdentityMismatch::MountId);
  EXPECT_EQ(compare_identity(expected, {10, 20, 31, 40}), IdentityMismatch::UniqueId);
  EXPECT_EQ(compare_identity(expected, {10, 20, 30, 41}), IdentityMismatch::FsType);
  EXPECT_EQ(compare_identity({10, 20, 0, 0}, {10, 20, 31, 41}), IdentityMismatch::None);
  EXPECT_EQ(compare_identity({}, {1, 2, 3, 4}), IdentityMismatch::None);
}

TEST(FormatUuid, WritesSixteenBytesAsLowerCaseGroupsOfEightFourFourFourTwelve) {
  std::array<std::uint8_t, 16> bytes{};
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::uint8_t>(0xa0 + i);
  EXPECT_EQ(format_uuid(bytes), "a0a1a2a3-a4a5-a6a7-a8a9-aaabacadaeaf");
}

TEST(FormatUuid, ReportsNothingForTheNilUuid) {
  const std::array<std::uint8_t, 16> nil{};
  EXPECT_EQ(format_uuid(nil), std::nullopt);
}

TEST(FormatUuid, ReportsNothingForAnotherLength) {
  const std::array<std::uint8_t, 8> short_id{1, 2, 3, 4, 5, 6, 7, 8};
  EXPECT_EQ(format_uuid(short_id), std::nullopt);
}

TEST(UuidFromSymlinkDir, FindsTheLinkThatResolvesToTheDevice) {
  ScratchDir scratch;
  const fs::path links = scratch.path() / "by-uuid";
  fs::create_directory(links);
  fs::create_symlink(scratch.touch("sda1"), links / "1111-AAAA");
  fs::create_symlink("../sdb1", links / "2222-BBBB");  // relative, as udev makes them
  scratch.touch("sdb1");
  fs::create_symlink(scratch.path() / "sdb1", scratch.path() / "alias");

  EXPECT_EQ(uuid_from_symlink_dir(links.string(), (scratch.path() / "alias").string()),
            "2222-bbbb");
  EXPECT_EQ(uuid_from_symlink_dir(links.string(), (scratch.path() / "sda1").string()), "1111-aaaa");
}

TEST(UuidFromSymlinkDir, ReportsNothingForAnUnknownDeviceOrAMissingDirectory) {
  ScratchDir scratch;
  const fs::path links = scratch.path() / "by-uuid";
  fs::create_directory(links);
  fs::create_symlink(scratch.touch("sda1"), links / "1111-AAAA");
  EXPECT_EQ(uuid_from_symlink_dir(links.string(), scratch.touch("sdc1").string()), std::nullopt);
  EXPECT_EQ(uuid_from_symlink_dir((scratch.path() / "none").string(), "/dev/null"), std::nullopt);
}

TEST(CombineGeometry, TakesXfsAllocationGroupsAndTheLargerOfDeviceAndDataSection) {
  const XfsGeometry xfs{4096, 32768, 131072};
  const FsGeometry grown = combine_geometry("xfs", 256u << 20, xfs, 1);
  EXPECT_EQ(grown.group_bytes, 32768u * 4096u);
  EXPECT_EQ(grown.size_bytes, 131072u * 4096u);
  const FsGeometry bigger_device = combine_geometry("xfs", 1u << 30, xfs, 1);
  EXPECT_EQ(bigger_device.size_bytes, 1u << 30);
  EXPECT_EQ(bigger_device.fs_type, "xfs");
}

TEST(CombineGeometry, UsesTheDeviceSizeAndFallsBackToStatfsWhenItIsUnknown) {
  const FsGeometry known = combine_geometry("ext4", 512u << 20, std::nullopt, 7);
  EXPECT_EQ(known.size_bytes, 512u << 20);
  EXPECT_EQ(known.group_bytes, 0u);
  EXPECT_EQ(combine_geometry("btrfs", 0, std::nullopt, 7).size_bytes, 7u);
}

TEST(SystemFsProber, FallsBackToStatfsSizeForAnUnknownDeviceSize) {
  if (!filesystem_is("/dev/shm", TMPFS_MAGIC)) GTEST_SKIP() << "/dev/shm is not a tmpfs here";
  struct statfs st {};
  ASSERT_EQ(::statfs("/dev/shm", &st), 0);
  const FsGeometry geometry = SystemFsProber().geometry("/dev/shm", "tmpfs", 0);
  EXPECT_EQ(geometry.size_bytes, static_cast<std::uint64_t>(st.f_blocks) * st.f_bsize);
  EXPECT_EQ(geometry.fs_type, "tmpfs");
}

TEST(SystemFsProber, KeepsTheDeviceSizeWhenTheXfsIoctlFails) {
  const FsGeometry geometry = SystemFsProber().geometry("/proc", "xfs", 12345);
  EXPECT_EQ(geometry.size_bytes, 12345u);
  EXPECT_EQ(geometry.group_bytes, 0u);
}

TEST(SystemFsProber, ReportsNoUuidForAFilesystemWithoutOne) {
  EXPECT_EQ(SystemFsProber().uuid("/proc", "proc"), std::nullopt);
}

}  // namespace
}  // namespace trimd
