// Issue 16, item 9: `trimd --once MOUNTPOINT` makes one pass over the named
// mount point and trims nothing else, even filesystems that are due; a named
// mount point trimd cannot trim (no filesystem there, or one on a disk
// without discard support) fails the run before anything is trimmed.
// What was trimmed is read from the backing files' allocation and the loop
// devices' discard counters.
#include <gtest/gtest.h>

#include <gmock/gmock.h>

#include <chrono>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "loopfs.hpp"
#include "trimd_process.hpp"

namespace trimd::test {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;

constexpr std::uint64_t kImageMib = 256;
constexpr std::size_t kFiles = 200;
constexpr std::uint64_t kFileBytes = 256 * 1024;

// Every test mount is enabled and due at once (first_delay 0s): only the
// command line can keep trimd off one of them. Nothing else is trimmed.
std::string config_for(const std::vector<std::string>& mount_points) {
  std::string toml =
      "[idle]\nwindow = \"1s\"\nsample_interval = \"200ms\"\n\n"
      "[trim]\nenabled = false\nfirst_delay = \"0s\"\nrandomized_delay = \"0s\"\n"
      "chunk_size = \"64MiB\"\npause = \"0s\"\n";
  for (const auto& mount_point : mount_points)
    toml += "\n[[filesystem]]\nmatch = \"" + mount_point + "\"\nenabled = true\n";
  return toml;
}

// An ext4 on a loop device whose queue/discard_max_bytes is 0, mounted: a
// filesystem trimd tracks but cannot trim (FITRIM would say EOPNOTSUPP).
LoopImage discardless_image() {
  LoopImage image = LoopImage::create(64);
  image.mkfs(Fs::Ext4);
  image.mount(kNoDiscard);
  image.disable_discard();
  return image;
}

// One fragmented image, mounted, as it was before trimd ran.
struct Untrimmed {
  FragmentedImage fragmented;
  std::uint64_t allocated = 0;
  DiscardCounters discards;

  explicit Untrimmed(FragmentedImage image) : fragmented(std::move(image)) {
    fragmented.image.sync();
    allocated = fragmented.image.allocated_bytes();
    discards = discard_counters(fragmented.image.loop_name());
  }
  const std::string& mount_point() const { return fragmented.image.mount_point(); }
  bool untouched() const {
    const DiscardCounters now = discard_counters(fragmented.image.loop_name());
    return now.completed == discards.completed && now.sectors == discards.sectors &&
           fragmented.image.allocated_bytes() == allocated;
  }
};

class TrimOnce : public ::testing::Test {
 protected:
  void SetUp() override {
    REQUIRE_ROOT_OR_FAIL();
    TRIMD_SKIP_OR_FAIL_IF(missing_tools(tools_for(Fs::Ext4)));
    named_.emplace(fragmented_image(Fs::Ext4, kImageMib, kFiles, kFileBytes));
    other_.emplace(fragmented_image(Fs::Ext4, kImageMib, kFiles, kFileBytes));
    sandbox_.write_config(config_for({named_->mount_point(), other_->mount_point()}));
  }

  TrimdSandbox sandbox_;
  std::optional<Untrimmed> named_;
  std::optional<Untrimmed> other_;
};

TEST_F(TrimOnce, WithAMountPointTrimsThatOneAndNotAnotherThatIsDue) {
  TrimdProcess trimd(sandbox_.args({"--once", named_->mount_point()}), sandbox_.log_path("once"));
  ASSERT_EQ(trimd.wait_for_exit(60s), 0) << trimd.log();
  named_->fragmented.image.sync();
  std::cout << "[trim-once] named: allocated " << mib(named_->allocated) << " -> "
            << mib(named_->fragmented.image.allocated_bytes())
            << " MiB; other: " << mib(other_->allocated) << " -> "
            << mib(other_->fragmented.image.allocated_bytes()) << " MiB, discards "
            << discard_counters(other_->fragmented.image.loop_name()).completed -
                   other_->discards.completed
            << std::endl;
  EXPECT_LT(named_->fragmented.image.allocated_bytes() + named_->fragmented.deleted / 2,
            named_->allocated)
      << trimd.log();
  EXPECT_TRUE(other_->untouched()) << "a mount point not named was trimmed\n" << trimd.log();
  EXPECT_EQ(state_last_result(sandbox_.state_file(), named_->mount_point()), "success");
  EXPECT_EQ(state_last_result(sandbox_.state_file(), other_->mount_point()), "");
}

TEST_F(TrimOnce, FailsAndTrimsNothingWhenANamedMountPointCannotBeTrimmed) {
  const std::string config = sandbox_.config_path();
  // A directory with no mount on it.
  const std::string not_a_filesystem = config.substr(0, config.rfind('/'));
  TrimdProcess trimd(sandbox_.args({"--once", named_->mount_point(), not_a_filesystem}),
                     sandbox_.log_path("once"));
  EXPECT_EQ(trimd.wait_for_exit(60s), 1) << trimd.log();
  EXPECT_TRUE(named_->untouched()) << "trimmed although the run failed\n" << trimd.log();
  EXPECT_TRUE(other_->untouched()) << "a mount point not named was trimmed\n" << trimd.log();
}

// The issue's `nd`: tracked, due, and without discard support, beside the
// two others that are due.
class TrimOnceNoDiscard : public TrimOnce {
 protected:
  void SetUp() override {
    TrimOnce::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    no_discard_.emplace(discardless_image());
    sandbox_.write_config(
        config_for({named_->mount_point(), other_->mount_point(), no_discard_->mount_point()}));
  }

  std::optional<LoopImage> no_discard_;
};

TEST_F(TrimOnceNoDiscard, FailsAndTrimsNothingElseWhenTheNamedFilesystemHasNoDiscardSupport) {
  TrimdProcess trimd(sandbox_.args({"--once", no_discard_->mount_point()}),
                     sandbox_.log_path("once"));
  EXPECT_EQ(trimd.wait_for_exit(60s), 1) << trimd.log();
  EXPECT_THAT(trimd.log(),
              HasSubstr(no_discard_->mount_point() + " cannot be trimmed: no discard support on " +
                        no_discard_->loop_name()));
  EXPECT_TRUE(named_->untouched()) << "a mount point not named was trimmed\n" << trimd.log();
  EXPECT_TRUE(other_->untouched()) << "a mount point not named was trimmed\n" << trimd.log();
}

TEST_F(TrimOnceNoDiscard, TrimsNoneOfTheNamedWhenOneOfThemHasNoDiscardSupport) {
  TrimdProcess trimd(sandbox_.args({"--once", named_->mount_point(), no_discard_->mount_point()}),
                     sandbox_.log_path("once"));
  EXPECT_EQ(trimd.wait_for_exit(60s), 1) << trimd.log();
  EXPECT_TRUE(named_->untouched()) << "trimmed although the run failed\n" << trimd.log();
  EXPECT_TRUE(other_->untouched()) << "a mount point not named was trimmed\n" << trimd.log();
}

}  // namespace
}  // namespace trimd::test
