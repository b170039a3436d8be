#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

#include "discard_mode.hpp"
#include "mountinfo.hpp"

namespace trimd {
namespace {

// Lines captured on kernel 6.18 from loop filesystems mounted with each mode
// (the "-taken" ones after a reconfigure with nodiscard).
std::vector<MountEntry> captured() {
  std::ifstream in(std::string(TRIMD_TEST_DATA) + "/mountinfo-discard-modes.txt");
  std::stringstream text;
  text << in.rdbuf();
  return parse_mountinfo(text.str());
}

DiscardMode mode_at(const std::string& mount_point) {
  const auto table = captured();
  const auto it = std::find_if(table.begin(), table.end(),
                               [&](const MountEntry& e) { return e.mount_point == mount_point; });
  if (it == table.end()) throw std::runtime_error("no mount at " + mount_point);
  return discard_mode(*it);
}

TEST(DiscardMode, Ext4AndXfsMountedWithDiscardDiscardSynchronously) {
  EXPECT_EQ(mode_at("/tmp/tko-exp/m4"), DiscardMode::Sync);
  EXPECT_EQ(mode_at("/tmp/tko-exp/mx"), DiscardMode::Sync);
}

TEST(DiscardMode, BtrfsDiscardSyncShowsAsPlainDiscardAndIsSync) {
  EXPECT_EQ(mode_at("/tmp/tko-exp/mb"), DiscardMode::Sync);
  EXPECT_EQ(discard_mode("btrfs", {"rw", "discard=sync"}), DiscardMode::Sync);
}

TEST(DiscardMode, BtrfsDefaultDiscardAsyncIsNotInlineDiscard) {
  EXPECT_EQ(mode_at("/tmp/tko-exp/ma"), DiscardMode::Async);
}

TEST(DiscardMode, AFilesystemWithoutDiscardOptionsHasNone) {
  EXPECT_EQ(mode_at("/tmp/tko-exp/m4-taken"), DiscardMode::None);
  EXPECT_EQ(mode_at("/tmp/tko-exp/mb-taken"), DiscardMode::None);
}

TEST(DiscardMode, F2fsQueuesItsDiscardsForABackgroundThread) {
  EXPECT_EQ(mode_at("/data"), DiscardMode::Async);
}

TEST(DiscardMode, TheLastDiscardOptionWins) {
  EXPECT_EQ(discard_mode("ext4", {"discard", "nodiscard"}), DiscardMode::None);
  EXPECT_EQ(discard_mode("btrfs", {"discard=async", "discard"}), DiscardMode::Sync);
  EXPECT_EQ(discard_mode("btrfs", {"discard", "discard=async"}), DiscardMode::Async);
}

TEST(DiscardMode, OptionsThatOnlyStartWithDiscardAreNotDiscard) {
  EXPECT_EQ(discard_mode("f2fs", {"discard_unit=block"}), DiscardMode::None);
  EXPECT_EQ(discard_mode("ext4", {"discarding"}), DiscardMode::None);
}

TEST(DiscardMode, NamesAreTheBusPropertyValues) {
  EXPECT_STREQ(to_string(DiscardMode::Sync), "sync");
  EXPECT_STREQ(to_string(DiscardMode::Async), "async");
  EXPECT_STREQ(to_string(DiscardMode::None), "");
}

}  // namespace
}  // namespace trimd
