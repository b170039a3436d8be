// The real remounter (fspick + fsconfig) on loop filesystems mounted with
// several options: discard goes off and comes back, nothing else changes,
// xfs keeps it, and a reconfigure from a private mount namespace (as trimd
// runs under ProtectSystem=strict) is seen outside it.
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include "loopfs.hpp"
#include "mount_table.hpp"
#include "remounter.hpp"

namespace trimd::test {
namespace {

constexpr std::uint64_t kImageMib = 320;  // xfs needs 300

std::string name_of(const ::testing::TestParamInfo<Fs>& param) { return fs_name(param.param); }

// Several options of both kinds, per mount and per superblock.
const char* options_for(Fs fs) {
  switch (fs) {
    case Fs::Ext4: return "discard,noatime,nodev,errors=remount-ro,commit=30";
    case Fs::Btrfs: return "discard=sync,noatime,nodev,compress=zstd,commit=60";
    case Fs::Xfs: return "discard,noatime,nodev,logbufs=4";
  }
  return "";
}

class RealRemounter : public ::testing::TestWithParam<Fs> {
 protected:
  void SetUp() override {
    REQUIRE_ROOT_OR_FAIL();
    TRIMD_SKIP_OR_FAIL_IF(missing_tools(tools_for(GetParam())));
    image_.emplace(LoopImage::create(kImageMib));
    image_->mkfs(GetParam());
    image_->mount(options_for(GetParam()));
  }

  const std::string& mnt() const { return image_->mount_point(); }
  RemountTarget target() const { return {mnt(), image_->mounted_dev()}; }

  std::optional<LoopImage> image_;
  FsconfigRemounter remounter_;
};

class TakesOver : public RealRemounter {};

TEST_P(TakesOver, TurnsDiscardOffAndOnAndChangesNoOtherOption) {
  const auto before = mount_entry_at(mnt());
  ASSERT_TRUE(before);
  ASSERT_EQ(discard_mode(*before), DiscardMode::Sync);

  const auto off = remounter_.set_discard(target(), false);
  ASSERT_EQ(off.result, RemountResult::Done) << off.message;
  const auto during = mount_entry_at(mnt());
  ASSERT_TRUE(during);
  EXPECT_EQ(discard_mode(*during), DiscardMode::None);
  EXPECT_EQ(during->mount_id, before->mount_id);
  EXPECT_EQ(during->mount_options, before->mount_options);
  EXPECT_EQ(super_options_but_discard(*during), super_options_but_discard(*before));

  const auto on = remounter_.set_discard(target(), true);
  ASSERT_EQ(on.result, RemountResult::Done) << on.message;
  const auto after = mount_entry_at(mnt());
  ASSERT_TRUE(after);
  EXPECT_EQ(after->super_options, before->super_options);
  EXPECT_EQ(after->mount_options, before->mount_options);
}

TEST_P(TakesOver, RefusesWhenAnotherFilesystemIsMountedThereNow) {
  const auto outcome = remounter_.set_discard({mnt(), image_->mounted_dev() + 1}, false);
  EXPECT_EQ(outcome.result, RemountResult::Failed);
  EXPECT_EQ(discard_mode_at(mnt()), DiscardMode::Sync);
}

// As systemd's ProtectSystem=strict leaves trimd: a mount namespace of its
// own where every mount is read-only. Returns the child's exit status:
// 0 done, 1 ignored, 2 failed, 3 the namespace could not be set up.
int set_discard_in_private_namespace(Remounter& remounter, const RemountTarget& target) {
  const pid_t pid = ::fork();
  if (pid < 0) return 3;
  if (pid == 0) {
    if (::unshare(CLONE_NEWNS) != 0 ||
        ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
        ::mount(nullptr, target.mount_point.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY,
                nullptr) != 0)
      ::_exit(3);
    ::_exit(static_cast<int>(remounter.set_discard(target, false).result));
  }
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return 3;
  return WEXITSTATUS(status);
}

TEST_P(TakesOver, FromAPrivateReadOnlyMountNamespaceForEveryNamespace) {
  const auto before = mount_entry_at(mnt());
  ASSERT_TRUE(before);
  ASSERT_EQ(set_discard_in_private_namespace(remounter_, target()),
            static_cast<int>(RemountResult::Done));
  const auto outside = mount_entry_at(mnt());
  ASSERT_TRUE(outside);
  EXPECT_EQ(discard_mode(*outside), DiscardMode::None);
  // The namespace's read-only mount did not leak into the superblock.
  EXPECT_FALSE(outside->read_only());
  EXPECT_EQ(outside->mount_options, before->mount_options);
  EXPECT_EQ(super_options_but_discard(*outside), super_options_but_discard(*before));
}

INSTANTIATE_TEST_SUITE_P(Ext4AndBtrfs, TakesOver, ::testing::Values(Fs::Ext4, Fs::Btrfs), name_of);

class XfsRemount : public RealRemounter {};

TEST_P(XfsRemount, KeepsDiscardAndTheRemounterSaysSo) {
  const auto outcome = remounter_.set_discard(target(), false);
  EXPECT_EQ(outcome.result, RemountResult::Ignored) << outcome.message;
  EXPECT_EQ(discard_mode_at(mnt()), DiscardMode::Sync);
}

INSTANTIATE_TEST_SUITE_P(Xfs, XfsRemount, ::testing::Values(Fs::Xfs), name_of);

}  // namespace
}  // namespace trimd::test
