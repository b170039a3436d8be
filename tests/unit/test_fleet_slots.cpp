// The names of a shared backend's slots: the keys of claims, and reading them back.
#include <gtest/gtest.h>

#include "fleet_slots.hpp"

namespace {

TEST(FleetSlots, AKeyKeepsAnIdWithSlashesAsOnePathElement) {
  EXPECT_EQ(trimd::slot_prefix("pool-a"), "/trimd/v1/pool-a/");
  EXPECT_EQ(trimd::slot_key("pool-a", "web3", "dev-/dev/sdb1-/srv"),
            "/trimd/v1/pool-a/web3/dev-%2Fdev%2Fsdb1-%2Fsrv");
  EXPECT_EQ(trimd::slot_key("pool-a", "h", "caf\xe9"), "/trimd/v1/pool-a/h/caf%E9");
}

TEST(FleetSlots, AKeyReadsBackAsItsHostAndFilesystemId) {
  const auto prefix = trimd::slot_prefix("pool-a");
  const auto parts =
      trimd::parse_slot_key(prefix, trimd::slot_key("pool-a", "web3", "dev-/dev/sdb1"));
  ASSERT_TRUE(parts);
  EXPECT_EQ(parts->host, "web3");
  EXPECT_EQ(parts->fs_id, "dev-/dev/sdb1");
}

TEST(FleetSlots, AKeySlotKeyCouldNotHaveWrittenIsNoClaimKey) {
  const auto prefix = trimd::slot_prefix("pool-a");
  for (const char* key :
       {"/trimd/v1/pool-a/web3", "/trimd/v1/pool-a/web3/fs/x", "/trimd/v1/pool-a//fs",
        "/trimd/v1/pool-a/web3/", "/trimd/v1/pool-b/h/fs", "/trimd/v1/pool-a/w\x1b/fs",
        "/trimd/v1/pool-a/h/%1", "/trimd/v1/pool-a/h/%zz", "/trimd/v1/pool-a/h/%e9"})
    EXPECT_FALSE(trimd::parse_slot_key(prefix, key)) << key;
}

TEST(FleetSlots, APassHeldUpLongerThanOneLeaseTtlGivesItsSlotBack) {
  using std::chrono::seconds;
  EXPECT_TRUE(trimd::keep_slot_while_held_up(seconds{15}, seconds{15}));
  EXPECT_FALSE(trimd::keep_slot_while_held_up(seconds{16}, seconds{15}));
}

}  // namespace
