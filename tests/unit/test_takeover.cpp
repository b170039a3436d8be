#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "takeover.hpp"

namespace trimd {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;

const TimePoint kNow = from_usec(1'800'000'000'000'000);
const TimePoint kEarlier = kNow - 24h;

TakeoverFacts ext4_with_discard() {
  TakeoverFacts f;
  f.mount_point = "/srv/data";
  f.fs_type = "ext4";
  f.mode = DiscardMode::Sync;
  return f;
}

TakeoverFacts taken_over(TakeoverOrigin origin) {
  TakeoverFacts f = ext4_with_discard();
  f.mode = DiscardMode::None;
  f.record = TakeoverRecord{kEarlier, origin};
  return f;
}

TakeoverDecision by_policy(const TakeoverFacts& f, InlineDiscardPolicy policy,
                           bool released = false) {
  return decide_takeover(f, policy, released, kNow);
}

TEST(TakeoverPolicy, TurnsOffSyncDiscardOfExt4AndBtrfsOnlyWhenThePolicySaysTakeover) {
  for (const char* type : {"ext4", "btrfs"}) {
    TakeoverFacts f = ext4_with_discard();
    f.fs_type = type;
    const auto d = by_policy(f, InlineDiscardPolicy::Takeover);
    EXPECT_EQ(d.action, TakeoverAction::TurnOff) << type;
    EXPECT_EQ(d.view, (TakeoverView{TakeoverStatus::TakenOver, "", kNow})) << type;
  }
  EXPECT_EQ(by_policy(ext4_with_discard(), InlineDiscardPolicy::Warn).action,
            TakeoverAction::Nothing);
  EXPECT_EQ(by_policy(ext4_with_discard(), InlineDiscardPolicy::Ignore).action,
            TakeoverAction::Nothing);
}

TEST(TakeoverPolicy, WarnShowsInlineAndIgnoreShowsIgnored) {
  EXPECT_EQ(by_policy(ext4_with_discard(), InlineDiscardPolicy::Warn).view.status,
            TakeoverStatus::Inline);
  EXPECT_EQ(by_policy(ext4_with_discard(), InlineDiscardPolicy::Ignore).view.status,
            TakeoverStatus::Ignored);
}

TEST(TakeoverPolicy, LeavesFilesystemsWithoutSyncDiscardAlone) {
  for (const auto mode : {DiscardMode::None, DiscardMode::Async}) {
    TakeoverFacts f = ext4_with_discard();
    f.fs_type = "btrfs";
    f.mode = mode;
    const auto d = by_policy(f, InlineDiscardPolicy::Takeover);
    EXPECT_EQ(d.action, TakeoverAction::Nothing);
    EXPECT_EQ(d.view.status, TakeoverStatus::None);
  }
}

TEST(TakeoverPolicy, ReportsXfsAsNotPossibleWithTheFstabLineToChange) {
  TakeoverFacts f = ext4_with_discard();
  f.fs_type = "xfs";
  f.fstab = FstabEntry{"UUID=1234", "/srv/data", "xfs", {"discard", "noatime"}};
  const auto d = by_policy(f, InlineDiscardPolicy::Takeover);
  EXPECT_EQ(d.action, TakeoverAction::Nothing);
  EXPECT_EQ(d.view.status, TakeoverStatus::NotPossible);
  EXPECT_THAT(d.view.reason, HasSubstr("xfs keeps 'discard' across a remount"));
  EXPECT_THAT(d.view.reason, HasSubstr("change \"UUID=1234 /srv/data xfs discard,noatime\" to "
                                       "\"UUID=1234 /srv/data xfs noatime\""));
}

TEST(TakeoverPolicy, NeverTouchesReadOnlyOrOptedOutFilesystems) {
  TakeoverFacts read_only = ext4_with_discard();
  read_only.read_only = true;
  TakeoverFacts skipped = ext4_with_discard();
  skipped.not_trimmed = "X-trimd.skip";
  for (const auto& f : {read_only, skipped}) {
    const auto d = by_policy(f, InlineDiscardPolicy::Takeover);
    EXPECT_EQ(d.action, TakeoverAction::Nothing);
    EXPECT_EQ(d.view.status, TakeoverStatus::NotPossible);
  }
  EXPECT_THAT(by_policy(skipped, InlineDiscardPolicy::Takeover).view.reason,
              HasSubstr("X-trimd.skip"));
}

TEST(TakeoverPolicy, AdoptsARecordedTakeoverWithoutRemounting) {
  const auto d = by_policy(taken_over(TakeoverOrigin::Policy), InlineDiscardPolicy::Takeover);
  EXPECT_EQ(d.action, TakeoverAction::Adopt);
  EXPECT_EQ(d.view, (TakeoverView{TakeoverStatus::TakenOver, "", kEarlier}));
}

TEST(TakeoverPolicy, KeepsATakeoverByRequestWhateverThePolicy) {
  for (const auto policy : {InlineDiscardPolicy::Warn, InlineDiscardPolicy::Ignore})
    EXPECT_EQ(by_policy(taken_over(TakeoverOrigin::Request), policy).action, TakeoverAction::Adopt);
}

TEST(TakeoverPolicy, HandsBackATakeoverByPolicyOnceThePolicyNoLongerSaysSo) {
  const auto d = by_policy(taken_over(TakeoverOrigin::Policy), InlineDiscardPolicy::Warn);
  EXPECT_EQ(d.action, TakeoverAction::HandBack);
  EXPECT_EQ(d.view.status, TakeoverStatus::Inline);
}

TEST(TakeoverPolicy, TakesOverAgainWhenDiscardCameBackAndThePolicyStillSaysSo) {
  TakeoverFacts f = taken_over(TakeoverOrigin::Policy);
  f.mode = DiscardMode::Sync;  // e.g. mounted again from fstab after a reboot
  const auto d = by_policy(f, InlineDiscardPolicy::Takeover);
  EXPECT_EQ(d.action, TakeoverAction::TurnOff);
  EXPECT_EQ(d.view.since, kNow);
}

TEST(TakeoverPolicy, ForgetsARequestedTakeoverOnceDiscardIsBack) {
  TakeoverFacts f = taken_over(TakeoverOrigin::Request);
  f.mode = DiscardMode::Sync;
  const auto d = by_policy(f, InlineDiscardPolicy::Warn);
  EXPECT_EQ(d.action, TakeoverAction::Forget);
  EXPECT_EQ(d.view.status, TakeoverStatus::Inline);
}

TEST(TakeoverPolicy, DoesNotTakeAgainWhatWasHandedBackOnRequest) {
  const auto d = by_policy(ext4_with_discard(), InlineDiscardPolicy::Takeover, true);
  EXPECT_EQ(d.action, TakeoverAction::Nothing);
  EXPECT_EQ(d.view.status, TakeoverStatus::Inline);
  EXPECT_EQ(d.view.reason, "handed back on request");
}

TEST(TakeoverRequest, TakesOverWhateverThePolicyButNeverPastAnObstacle) {
  EXPECT_EQ(decide_take_over_request(ext4_with_discard(), kNow).action, TakeoverAction::TurnOff);
  TakeoverFacts xfs = ext4_with_discard();
  xfs.fs_type = "xfs";
  const auto d = decide_take_over_request(xfs, kNow);
  EXPECT_EQ(d.action, TakeoverAction::Nothing);
  EXPECT_THAT(d.refusal, HasSubstr("/srv/data: cannot be taken over: xfs keeps 'discard'"));
}

TEST(TakeoverRequest, RefusesAsyncOrNoDiscardAndAcceptsWhatIsAlreadyTakenOver) {
  TakeoverFacts async = ext4_with_discard();
  async.fs_type = "btrfs";
  async.mode = DiscardMode::Async;
  EXPECT_THAT(decide_take_over_request(async, kNow).refusal, HasSubstr("discard=async"));
  TakeoverFacts none = ext4_with_discard();
  none.mode = DiscardMode::None;
  EXPECT_THAT(decide_take_over_request(none, kNow).refusal,
              HasSubstr("not mounted with 'discard'"));
  const auto again = decide_take_over_request(taken_over(TakeoverOrigin::Policy), kNow);
  EXPECT_EQ(again.action, TakeoverAction::Adopt);
  EXPECT_TRUE(again.refusal.empty());
}

TEST(HandBack, RestoresDiscardOnlyOfWhatTrimdTookOver) {
  EXPECT_EQ(decide_hand_back(taken_over(TakeoverOrigin::Request)).action, TakeoverAction::HandBack);
  EXPECT_THAT(decide_hand_back(ext4_with_discard()).refusal,
              HasSubstr("trimd did not take it over"));
  TakeoverFacts restored = taken_over(TakeoverOrigin::Policy);
  restored.mode = DiscardMode::Sync;  // someone gave it back already
  EXPECT_EQ(decide_hand_back(restored).action, TakeoverAction::Forget);
}

TEST(FirstPassAfterTakeover, IsDueSoonAfterTheTakeoverUntilAPassHasEnded) {
  FsRecord record;
  EXPECT_FALSE(first_pass_after_takeover(record));
  record.taken_over = TakeoverRecord{kNow, TakeoverOrigin::Policy};
  record.last_end = kEarlier;
  EXPECT_EQ(first_pass_after_takeover(record), kNow + kFirstPassAfterTakeover);
  record.last_end = kNow + 10min;
  EXPECT_FALSE(first_pass_after_takeover(record));
}

TEST(FstabAdvice, EscapesBlanksAndSaysDefaultsWhenNoOptionIsLeft) {
  TakeoverFacts f = ext4_with_discard();
  f.fstab = FstabEntry{"/dev/sdb1", "/srv/vm images", "xfs", {"discard"}};
  EXPECT_EQ(fstab_advice(f),
            "in /etc/fstab change \"/dev/sdb1 /srv/vm\\040images xfs discard\" to "
            "\"/dev/sdb1 /srv/vm\\040images xfs defaults\", then unmount and mount it again");
  f.fstab.reset();
  EXPECT_THAT(fstab_advice(f), HasSubstr("unmount, then mount"));
}

TEST(StopIsARestart, OnlyWhenSystemdRestartsTheUnit) {
  EXPECT_TRUE(stop_is_a_restart("restart"));
  EXPECT_TRUE(stop_is_a_restart("try-restart"));
  EXPECT_FALSE(stop_is_a_restart("stop"));
  EXPECT_FALSE(stop_is_a_restart(std::nullopt));  // no systemd, no job: a plain stop
}

TEST(TakeoverStatusNames, AreTheBusPropertyValues) {
  EXPECT_STREQ(to_string(TakeoverStatus::None), "none");
  EXPECT_STREQ(to_string(TakeoverStatus::TakenOver), "taken-over");
  EXPECT_STREQ(to_string(TakeoverStatus::NotPossible), "not-possible");
}

}  // namespace
}  // namespace trimd
