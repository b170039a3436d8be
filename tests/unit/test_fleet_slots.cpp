// Who holds a slot of a shared backend, from the claims etcd returns.
#include <gtest/gtest.h>

#include "fleet_slots.hpp"

namespace {

using trimd::SlotClaim;

SlotClaim claim(const std::string& host, std::int64_t revision, const std::string& mount = "/srv") {
  return SlotClaim{trimd::slot_key("pool-a", host, "uuid-" + host), revision, host, mount};
}

TEST(FleetSlots, TheFirstClaimsByArrivalHoldTheSlotsWhateverOrderTheRangeGave) {
  const std::vector<SlotClaim> claims{claim("c", 30), claim("a", 10), claim("d", 40),
                                      claim("b", 20)};
  const auto a = trimd::standing_of(claims, claim("a", 10).key, 2);
  const auto b = trimd::standing_of(claims, claim("b", 20).key, 2);
  const auto c = trimd::standing_of(claims, claim("c", 30).key, 2);
  const auto d = trimd::standing_of(claims, claim("d", 40).key, 2);
  ASSERT_TRUE(a && b && c && d);
  EXPECT_TRUE(a->holds);
  EXPECT_TRUE(b->holds);
  EXPECT_FALSE(c->holds);
  EXPECT_EQ(c->ahead, 1u);
  EXPECT_EQ(d->ahead, 2u);
  ASSERT_EQ(c->holders.size(), 2u);
  EXPECT_EQ(c->holders[0].host, "a");
  EXPECT_EQ(c->holders[1].host, "b");
}

TEST(FleetSlots, AWaiterMovesUpWhenAHolderLeaves) {
  const auto before = trimd::standing_of({claim("a", 1), claim("b", 2)}, claim("b", 2).key, 1);
  const auto after = trimd::standing_of({claim("b", 2)}, claim("b", 2).key, 1);
  ASSERT_TRUE(before && after);
  EXPECT_FALSE(before->holds);
  EXPECT_TRUE(after->holds);
}

TEST(FleetSlots, AClaimThatIsGoneHasLostItsSlot) {
  EXPECT_FALSE(trimd::standing_of({claim("a", 1)}, claim("b", 2).key, 1));
}

TEST(FleetSlots, ClaimsOfOneTransactionGoByKey) {
  const auto x = trimd::standing_of({claim("y", 5), claim("x", 5)}, claim("x", 5).key, 1);
  ASSERT_TRUE(x);
  EXPECT_TRUE(x->holds);
}

TEST(FleetSlots, AKeyKeepsAnIdWithSlashesAsOnePathElement) {
  EXPECT_EQ(trimd::slot_prefix("pool-a"), "/trimd/v1/pool-a/");
  EXPECT_EQ(trimd::slot_key("pool-a", "web3", "dev-/dev/sdb1-/srv"),
            "/trimd/v1/pool-a/web3/dev-%2Fdev%2Fsdb1-%2Fsrv");
  EXPECT_EQ(trimd::slot_key("pool-a", "h", "caf\xe9"), "/trimd/v1/pool-a/h/caf%E9");
}

TEST(FleetSlots, TheReasonNamesTheBackendAndEveryHolder) {
  const auto s = trimd::standing_of(
      {claim("web3", 1, "/srv"), claim("db1", 2, "/var"), claim("me", 3)}, claim("me", 3).key, 2);
  ASSERT_TRUE(s);
  EXPECT_EQ(trimd::holders_text("pool-a", *s, 2), "pool-a: 2/2 slots held by web3:/srv, db1:/var");
}

TEST(FleetSlots, APassHeldUpLongerThanOneLeaseTtlGivesItsSlotBack) {
  using std::chrono::seconds;
  EXPECT_TRUE(trimd::keep_slot_while_held_up(seconds{15}, seconds{15}));
  EXPECT_FALSE(trimd::keep_slot_while_held_up(seconds{16}, seconds{15}));
}

}  // namespace
