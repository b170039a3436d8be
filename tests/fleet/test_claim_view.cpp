// One backend's claims as a host sees them (claim_view.hpp): who holds a
// slot, which keys do not count and why, and the bounds on what the view
// keeps and tells, whatever is under the prefix.
#include "claim_view.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using trimd::fleet::ClaimFault;
using trimd::fleet::ClaimStanding;
using trimd::fleet::ClaimView;
using trimd::fleet::FleetReport;
using Kind = ClaimStanding::Kind;

const std::string kPrefix = trimd::slot_prefix("pool-a");

trimd::etcd::KeyValue claim(const std::string& host, std::int64_t revision,
                            const std::string& mount = "/srv", std::int64_t lease = 77) {
  return {trimd::slot_key("pool-a", host, "fs-" + host),
          R"({"host":")" + host + R"(","mount_point":")" + mount + R"("})", revision, revision,
          lease};
}

std::string key_of(const std::string& host) {
  return trimd::slot_key("pool-a", host, "fs-" + host);
}

trimd::etcd::RangeReply range(std::vector<trimd::etcd::KeyValue> kvs, std::int64_t revision = 100,
                              std::int64_t count = -1) {
  trimd::etcd::RangeReply reply;
  reply.count = count < 0 ? static_cast<std::int64_t>(kvs.size()) : count;
  reply.more = reply.count > static_cast<std::int64_t>(kvs.size());
  reply.kvs = std::move(kvs);
  reply.revision = revision;
  return reply;
}

ClaimView view_of(std::vector<trimd::etcd::KeyValue> kvs) {
  ClaimView view(kPrefix);
  view.reset(range(std::move(kvs)));
  return view;
}

trimd::etcd::WatchMessage put_event(trimd::etcd::KeyValue kv) {
  trimd::etcd::WatchMessage message;
  message.revision = kv.create_revision;
  message.events.push_back({trimd::etcd::WatchEvent::Type::Put, std::move(kv)});
  return message;
}

trimd::etcd::WatchMessage delete_event(const std::string& key, std::int64_t revision) {
  trimd::etcd::WatchMessage message;
  message.revision = revision;
  trimd::etcd::KeyValue kv;
  kv.key = key;
  kv.mod_revision = revision;
  message.events.push_back({trimd::etcd::WatchEvent::Type::Delete, kv});
  return message;
}

TEST(AClaimView, GivesTheSlotsToTheOldestClaimsAndQueuesTheRestInOrder) {
  const auto view = view_of({claim("c", 30), claim("a", 10), claim("d", 40), claim("b", 20)});
  EXPECT_EQ(view.standing(key_of("a"), 10, 2).kind, Kind::Holds);
  EXPECT_EQ(view.standing(key_of("b"), 20, 2).kind, Kind::Holds);
  const auto c = view.standing(key_of("c"), 30, 2);
  const auto d = view.standing(key_of("d"), 40, 2);
  EXPECT_EQ(c.kind, Kind::Waits);
  EXPECT_EQ(c.ahead, 1u);
  EXPECT_EQ(d.ahead, 2u);
}

TEST(AClaimView, SaysAClaimThatIsNotThereIsGone) {
  EXPECT_EQ(view_of({claim("a", 1)}).standing(key_of("b"), 2, 1).kind, Kind::Gone);
}

TEST(AClaimView, OrdersClaimsOfOneTransactionByKey) {
  EXPECT_EQ(view_of({claim("y", 5), claim("x", 5)}).standing(key_of("x"), 5, 1).kind, Kind::Holds);
}

TEST(AClaimView, NamesTheBackendAndTheHolders) {
  const auto view = view_of({claim("web3", 1, "/srv"), claim("db1", 2, "/var"), claim("me", 3)});
  EXPECT_EQ(view.holders_text("pool-a", 2), "pool-a: 2/2 slots held by web3:/srv, db1:/var");
  EXPECT_EQ(view_of({}).holders_text("pool-a", 2), "pool-a: 0/2 slots held by nobody");
}

TEST(AClaimView, CountsOnlyClaimsWithALease) {
  // A key with no lease, written before ours, would hold the only slot for ever.
  const auto view = view_of({claim("squatter", 1, "/x", 0), claim("me", 2)});
  EXPECT_EQ(view.standing(key_of("me"), 2, 1).kind, Kind::Holds);
  ASSERT_EQ(view.ignored().size(), 1u);
  EXPECT_EQ(view.ignored()[0]->fault, ClaimFault::NoLease);
}

TEST(AClaimView, CountsNoKeyThatSlotKeyCouldNotHaveWritten) {
  auto odd = claim("odd", 1);
  odd.key = kPrefix + "odd/fs/extra";
  const auto view = view_of({odd, claim("me", 2)});
  EXPECT_EQ(view.standing(key_of("me"), 2, 1).kind, Kind::Holds);
  EXPECT_EQ(view.ignored().at(0)->fault, ClaimFault::BadKey);
}

// What counts rests on the key and its lease, which etcd vouches for; the
// value is its writer's word, shown when it can be read and never decisive.
TEST(AClaimView, CountsAClaimWhoseValueIsNotTrimdsWithItsNamesUnknown) {
  for (const std::string value :
       {"", "[]", "{}", R"({"host":"h"})", R"({"host":7,"mount_point":"/"})",
        "[[[[[[[[[[]]]]]]]]]]", "not json"}) {
    auto bad = claim("bad", 1);
    bad.value = value;
    const auto view = view_of({bad, claim("me", 2)});
    EXPECT_EQ(view.standing(key_of("me"), 2, 1).kind, Kind::Waits) << value;
    EXPECT_TRUE(view.ignored().empty()) << value;
    EXPECT_EQ(view.holders_text("pool-a", 1), "pool-a: 1/1 slots held by bad:?") << value;
  }
}

TEST(AClaimView, CountsAClaimWhoseValueIsOverTheBoundWithoutItsNames) {
  auto big = claim("big", 1);
  big.value = R"({"host":"big","mount_point":")" +
              std::string(trimd::fleet::kMaxClaimValueBytes, 'x') + R"("})";
  const auto view = view_of({big, claim("me", 2)});
  EXPECT_EQ(view.standing(key_of("me"), 2, 1).kind, Kind::Waits);
  FleetReport report;
  view.report("pool-a", 1, {}, report);
  EXPECT_EQ(report.rows.at(0).fault, ClaimFault::OversizedValue);
  EXPECT_EQ(report.rows.at(0).mount_point, "?");
}

TEST(AClaimView, ReadOfKeysOnlyDecidesAsAFullReadAndKeepsTheNamesItKnew) {
  ClaimView view(kPrefix);
  view.reset(range({claim("a", 1, "/srv"), claim("me", 2)}));
  auto keys = range({claim("a", 1), claim("b", 3, "/b", 0), claim("me", 2)});
  for (auto& kv : keys.kvs) kv.value.clear();
  view.reset(keys, true);
  EXPECT_EQ(view.standing(key_of("me"), 2, 1).kind, Kind::Waits);
  EXPECT_EQ(view.holders_text("pool-a", 1), "pool-a: 1/1 slots held by a:/srv");
  EXPECT_EQ(view.ignored().size(), 1u);  // the lease-less one, values or not
  FleetReport report;
  view.report("pool-a", 1, {}, report);
  EXPECT_TRUE(report.backends.at(0).names_unread);
}

TEST(AClaimView, FollowsPutsAndDeletesWithoutReadingAgain) {
  ClaimView view(kPrefix);
  view.reset(range({claim("a", 10), claim("me", 20)}, 20));
  EXPECT_EQ(view.standing(key_of("me"), 20, 1).kind, Kind::Waits);
  EXPECT_TRUE(view.apply(put_event(claim("late", 30))));
  EXPECT_TRUE(view.apply(delete_event(key_of("a"), 31)));
  EXPECT_EQ(view.standing(key_of("me"), 20, 1).kind, Kind::Holds);
  EXPECT_EQ(view.standing(key_of("late"), 30, 1).kind, Kind::Waits);
  EXPECT_EQ(view.revision(), 31);  // a view at 31 can judge a claim put at 31
}

TEST(AClaimView, KeepsAtMostOneReadsWorthOfClaimsAndCountsTheRest) {
  const auto limit = trimd::fleet::kClaimsPerRead;
  std::vector<trimd::etcd::KeyValue> first;
  for (std::int64_t i = 0; i < limit; ++i) first.push_back(claim("h" + std::to_string(i), i + 1));
  ClaimView view(kPrefix);
  view.reset(range(first, limit + 10, limit + 5));  // etcd holds 5 more than it sent
  EXPECT_TRUE(view.cut());
  // Ours is one of those past the read: it waits, and the view says so.
  EXPECT_EQ(view.standing(key_of("mine"), limit + 3, 4).kind, Kind::PastTheView);
  // A new claim is counted, not kept.
  EXPECT_TRUE(view.apply(put_event(claim("new", limit + 20))));
  EXPECT_EQ(view.keys_in_etcd(), limit + 6);
  FleetReport report;
  view.report("pool-a", 4, {}, report);
  EXPECT_EQ(report.backends.at(0).unread, 6u);
  // A claim before the cut that goes lets one past it move in: the view
  // cannot tell which, so it asks for a read.
  EXPECT_FALSE(view.apply(delete_event(key_of("h0"), limit + 21)));
}

TEST(AClaimView, ReportsABoundedPageOfRowsWithOursWhereverItStands) {
  std::vector<trimd::etcd::KeyValue> kvs;
  for (int i = 0; i < 200; ++i) kvs.push_back(claim("h" + std::to_string(i), i + 1));
  for (int i = 0; i < 40; ++i) kvs.push_back(claim("x" + std::to_string(i), 300 + i, "/x", 0));
  const auto view = view_of(kvs);
  FleetReport report;
  view.report("pool-a", 4, {key_of("h150")}, report);
  const auto& summary = report.backends.at(0);
  EXPECT_EQ(summary.counted, 200u);
  EXPECT_EQ(summary.ignored, 40u);
  EXPECT_EQ(summary.unlisted, 200u - trimd::fleet::kReportRowsPerBackend - 1);
  EXPECT_EQ(report.rows.size(),
            trimd::fleet::kReportRowsPerBackend + 1 + trimd::fleet::kReportIgnoredPerBackend);
  const auto ours = std::find_if(report.rows.begin(), report.rows.end(),
                                 [](const auto& row) { return row.ours; });
  ASSERT_NE(ours, report.rows.end());
  EXPECT_EQ(ours->position, 151u);
  EXPECT_EQ(report.rows.back().fault, ClaimFault::NoLease);
  EXPECT_EQ(report.rows.back().position, 0u);
}

TEST(AClaimView, NamesAtMostThreeHoldersEachCutToABoundedLength) {
  const std::string long_mount = "/" + std::string(700, 'm');  // the value within its bound
  std::vector<trimd::etcd::KeyValue> kvs;
  for (int i = 0; i < 8; ++i) {
    auto kv = claim("h" + std::to_string(i), i + 1);
    kv.value =
        R"({"host":")" + std::string(200, 'h') + R"(","mount_point":")" + long_mount + R"("})";
    kvs.push_back(kv);
  }
  const auto text = view_of(kvs).holders_text("pool-a", 8);
  EXPECT_NE(text.find("and 5 more"), std::string::npos) << text;
  EXPECT_LT(text.size(), 512u);
}

TEST(AClaimView, DoesNotKeepAKeyOverTheBoundOnlyCountsIt) {
  auto huge = claim("huge", 1);
  huge.key = kPrefix + std::string(100000, 'k') + "/fs";
  const auto view = view_of({huge, claim("me", 2)});
  EXPECT_EQ(view.standing(key_of("me"), 2, 1).kind, Kind::Holds);
  EXPECT_TRUE(view.ignored().empty());
  FleetReport report;
  view.report("pool-a", 1, {}, report);
  EXPECT_EQ(report.backends.at(0).ignored, 1u);
}

}  // namespace

// How far a page reaches for the near window: keys that do not count are
// passed over, so lease-less junk cannot make a waiter look nearer.
TEST(AClaimView, ReachesTheWindowsLastClaimThatCountsPassingOverJunk) {
  const auto view = view_of({claim("a", 10), claim("junk1", 11, "/x", 0), claim("b", 12),
                             claim("junk2", 13, "/x", 0), claim("c", 14)});
  EXPECT_EQ(view.counted(), 3u);
  EXPECT_EQ(view.reach(2), 12);
  EXPECT_EQ(view.reach(3), 14);
  EXPECT_EQ(view.reach(9), 14) << "fewer count than the window: the view's last claim";
  EXPECT_EQ(view_of({}).reach(2), 0);
  EXPECT_TRUE(view.has(key_of("junk1")));
  EXPECT_FALSE(view.has(key_of("d")));
}
