// The takeover controller on the real manager, with a fake remounter: what
// it remounts, what it records, what it shows.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "manager_fixture.hpp"
#include "takeover_controller.hpp"

namespace trimd::test {
namespace {

using ::testing::HasSubstr;

struct RemountCall {
  std::string mount_point;
  bool discard;
};

class FakeRemounter final : public Remounter {
 public:
  RemountOutcome set_discard(const RemountTarget& target, bool discard) override {
    calls.push_back({target.mount_point, discard});
    return next;
  }
  MountInstance instance_at(const std::string& mount_point,
                            const std::vector<std::string>& super_options) override {
    const auto it = mount_ids.find(mount_point);
    return {boot_id, namespace_id, it == mount_ids.end() ? 1 : it->second,
            options_but_discard(super_options)};
  }
  std::vector<RemountCall> calls;
  RemountOutcome next;
  // The kernel's unique mount ids (1 unless set), per mount point.
  std::map<std::string, std::uint64_t> mount_ids;
  std::string boot_id = "boot-1";
  std::uint64_t namespace_id = 1;
};

DiscoveredFs with_options(DiscoveredFs fs, std::vector<std::string> super_options) {
  fs.mount.super_options = std::move(super_options);
  return fs;
}

class TakeoverControllerTest : public ManagerTest {
 protected:
  void start(Config config, StateMap state = {}) {
    manager_ = make(std::move(config), std::move(state));
    controller_ = std::make_unique<TakeoverController>(*manager_, remounter_);
  }
  static Config takeover_config() {
    Config config = quick_config();
    config.trim.schedule.first_delay = 1h;
    config.trim.inline_discard = InlineDiscardPolicy::Takeover;
    return config;
  }
  // A rescan: the manager first, then the controller, as the daemon does.
  bool rescan(const std::vector<DiscoveredFs>& found) {
    manager_->update_filesystems(found, now);
    return controller_->reconcile(found, {}, now);
  }
  FsStatus status(const DiscoveredFs& fs) { return *manager_->status(fs.id, now); }
  // The record a takeover of `fs` right now leaves.
  TakeoverRecord taken_now(const DiscoveredFs& fs, TakeoverOrigin origin) {
    return {now, origin, remounter_.instance_at(fs.mount.mount_point, fs.mount.super_options)};
  }
  std::optional<TakeoverRecord> record(const DiscoveredFs& fs) {
    const auto& state = manager_->persistent_state();
    const auto it = state.find(fs.id);
    return it == state.end() ? std::nullopt : it->second.taken_over;
  }

  DiscoveredFs ext4_ = with_options(make_fs("/srv/a", "loop1"), {"rw", "discard", "commit=30"});
  DiscoveredFs ext4_off_ = with_options(ext4_, {"rw", "commit=30"});
  DiscoveredFs xfs_ = with_options(make_fs("/srv/x", "loop2", 10 * GiB, "xfs"), {"rw", "discard"});
  FakeRemounter remounter_;
  std::unique_ptr<Manager> manager_;
  std::unique_ptr<TakeoverController> controller_;
};

TEST_F(TakeoverControllerTest, TakesOverByPolicyRecordsItAndMakesTheFirstPassDueSoon) {
  start(takeover_config(), trimmed_at(ext4_, now - 24h));
  EXPECT_TRUE(rescan({ext4_}));
  ASSERT_EQ(remounter_.calls.size(), 1u);
  EXPECT_EQ(remounter_.calls[0].mount_point, "/srv/a");
  EXPECT_FALSE(remounter_.calls[0].discard);
  EXPECT_EQ(record(ext4_), taken_now(ext4_, TakeoverOrigin::Policy));
  EXPECT_TRUE(manager_->state_dirty());
  const FsStatus s = status(ext4_);
  EXPECT_EQ(s.takeover, (TakeoverView{TakeoverStatus::TakenOver, "", now}));
  EXPECT_EQ(s.next_trim, now + kFirstPassAfterTakeover);
}

TEST_F(TakeoverControllerTest, AdoptsARecordedTakeoverAfterARestartWithoutRemounting) {
  StateMap state;
  state[ext4_.id].taken_over = TakeoverRecord{now - 1h, TakeoverOrigin::Policy};
  start(takeover_config(), state);
  EXPECT_FALSE(rescan({ext4_off_}));
  EXPECT_TRUE(remounter_.calls.empty());
  EXPECT_EQ(status(ext4_).takeover.status, TakeoverStatus::TakenOver);
  EXPECT_EQ(status(ext4_).takeover.since, now - 1h);
}

TEST_F(TakeoverControllerTest, NeverRemountsUnderTheDefaultWarnPolicy) {
  start(quick_config());
  EXPECT_FALSE(rescan({ext4_, xfs_}));
  EXPECT_TRUE(remounter_.calls.empty());
  EXPECT_EQ(status(ext4_).takeover.status, TakeoverStatus::Inline);
  EXPECT_FALSE(record(ext4_));
}

TEST_F(TakeoverControllerTest, ReportsXfsAsNotPossibleWithoutRemountingIt) {
  start(takeover_config());
  rescan({xfs_});
  EXPECT_TRUE(remounter_.calls.empty());
  EXPECT_EQ(status(xfs_).takeover.status, TakeoverStatus::NotPossible);
  EXPECT_THAT(status(xfs_).takeover.reason, HasSubstr("xfs keeps 'discard'"));
}

TEST_F(TakeoverControllerTest, NeverRemountsAFilesystemOptedOutWithXTrimdSkip) {
  start(takeover_config());
  DiscoveredFs skipped = ext4_;
  skipped.disabled_reason = "X-trimd.skip in /etc/fstab";
  rescan({skipped});
  EXPECT_THROW(controller_->take_over({skipped.id}, now), ManagerError);
  EXPECT_TRUE(remounter_.calls.empty());
  EXPECT_EQ(status(skipped).takeover.status, TakeoverStatus::NotPossible);
  EXPECT_THAT(status(skipped).takeover.reason, HasSubstr("X-trimd.skip"));
}

TEST_F(TakeoverControllerTest, NeverRemountsWhatThePolicyDoesNotName) {
  Config config = quick_config();
  config.overrides =
      parse_config("[[filesystem]]\nmatch = \"/srv/b\"\ninline_discard = \"takeover\"\n", "t.toml")
          .overrides;
  start(config);
  DiscoveredFs b = with_options(make_fs("/srv/b", "loop3"), {"rw", "discard"});
  EXPECT_TRUE(rescan({ext4_, b}));
  ASSERT_EQ(remounter_.calls.size(), 1u);
  EXPECT_EQ(remounter_.calls[0].mount_point, "/srv/b");
}

TEST_F(TakeoverControllerTest, ShowsAFailedRemountAndRetriesOnlyAfterAReload) {
  start(takeover_config());
  remounter_.next = {RemountResult::Failed, "fsconfig: Operation not permitted"};
  EXPECT_FALSE(rescan({ext4_}));
  EXPECT_EQ(
      status(ext4_).takeover,
      (TakeoverView{TakeoverStatus::Failed, "fsconfig: Operation not permitted", std::nullopt}));
  EXPECT_FALSE(record(ext4_));
  rescan({ext4_});
  EXPECT_EQ(remounter_.calls.size(), 1u);
  controller_->policy_changed();
  remounter_.next = {};
  EXPECT_TRUE(rescan({ext4_}));
  EXPECT_EQ(remounter_.calls.size(), 2u);
}

TEST_F(TakeoverControllerTest, HandsBackOnACleanStopUnlessThePolicySaysNot) {
  start(takeover_config());
  rescan({ext4_});
  rescan({ext4_off_});  // what the rescan after the remount sees
  controller_->stop(now);
  ASSERT_EQ(remounter_.calls.size(), 2u);
  EXPECT_TRUE(remounter_.calls[1].discard);
  EXPECT_FALSE(record(ext4_));

  Config keep = takeover_config();
  keep.trim.hand_back_on_stop = false;
  StateMap state;
  state[ext4_.id].taken_over = TakeoverRecord{now, TakeoverOrigin::Policy};
  start(keep, state);
  remounter_.calls.clear();
  rescan({ext4_off_});
  controller_->stop(now);
  EXPECT_TRUE(remounter_.calls.empty());
  EXPECT_TRUE(record(ext4_));
}

TEST_F(TakeoverControllerTest, KeepsTheTakeoverAcrossARestart) {
  start(takeover_config());
  rescan({ext4_});
  rescan({ext4_off_});
  EXPECT_TRUE(controller_->owes_discard());
  controller_->stop(now, true);
  EXPECT_EQ(remounter_.calls.size(), 1u);
  EXPECT_TRUE(record(ext4_));
}

TEST_F(TakeoverControllerTest, OwesNothingBeforeATakeover) {
  start(quick_config());
  rescan({ext4_, xfs_});
  EXPECT_FALSE(controller_->owes_discard());
}

TEST_F(TakeoverControllerTest, TakesOverOnRequestWhateverThePolicyAndHandsBackOnRequest) {
  start(quick_config());
  rescan({ext4_});
  controller_->take_over({ext4_.id}, now);
  EXPECT_EQ(record(ext4_), taken_now(ext4_, TakeoverOrigin::Request));
  rescan({ext4_off_});
  EXPECT_EQ(status(ext4_).takeover.status, TakeoverStatus::TakenOver);  // kept under "warn"
  controller_->hand_back({ext4_.id}, now);
  ASSERT_EQ(remounter_.calls.size(), 2u);
  EXPECT_TRUE(remounter_.calls[1].discard);
  EXPECT_FALSE(record(ext4_));
}

TEST_F(TakeoverControllerTest, DoesNotTakeBackByPolicyWhatWasHandedBackOnRequest) {
  start(takeover_config());
  rescan({ext4_});
  rescan({ext4_off_});
  controller_->hand_back({ext4_.id}, now);
  EXPECT_FALSE(rescan({ext4_}));
  EXPECT_EQ(remounter_.calls.size(), 2u);
  EXPECT_EQ(status(ext4_).takeover.reason, "handed back on request");
}

TEST_F(TakeoverControllerTest, ChecksEveryNamedFilesystemBeforeRemountingAny) {
  start(quick_config());
  rescan({ext4_, xfs_});
  EXPECT_THROW(controller_->take_over({ext4_.id, xfs_.id}, now), ManagerError);
  EXPECT_TRUE(remounter_.calls.empty());
  EXPECT_THROW(controller_->hand_back({ext4_.id}, now), ManagerError);
  EXPECT_THROW(controller_->take_over({"nope"}, now), ManagerError);
  EXPECT_THROW(controller_->take_over({}, now), ManagerError);
}

// Issue 16, item 5: a takeover belongs to one mount, not to a path or a UUID.
TEST_F(TakeoverControllerTest, GivesNoDiscardToAMountMadeSinceWithoutIt) {
  start(takeover_config());
  rescan({ext4_});
  rescan({ext4_off_});
  remounter_.mount_ids["/srv/a"] = 2;  // umount /srv/a; mount it again without discard
  rescan({ext4_off_});
  EXPECT_FALSE(record(ext4_));
  EXPECT_EQ(status(ext4_).takeover.status, TakeoverStatus::None);
  EXPECT_FALSE(controller_->owes_discard());
  controller_->stop(now);
  ASSERT_EQ(remounter_.calls.size(), 1u) << "remounted the admin's mount with discard";
  EXPECT_FALSE(remounter_.calls[0].discard);
}

TEST_F(TakeoverControllerTest, GivesNoDiscardOnStopToAMountMadeSinceTheLastRescan) {
  start(takeover_config());
  rescan({ext4_});
  rescan({ext4_off_});
  remounter_.mount_ids["/srv/a"] = 2;  // and SIGTERM before the rescan
  controller_->stop(now);
  EXPECT_EQ(remounter_.calls.size(), 1u) << "remounted the admin's mount with discard";
  EXPECT_FALSE(record(ext4_));
}

TEST_F(TakeoverControllerTest, LetsGoOfTheMountAnAdminPutDiscardBackOnUntilAReload) {
  start(takeover_config());
  rescan({ext4_});
  rescan({ext4_off_});
  EXPECT_FALSE(rescan({ext4_}));  // mount -o remount,discard /srv/a: the same mount
  EXPECT_EQ(remounter_.calls.size(), 1u) << "took discard away from the admin again";
  EXPECT_FALSE(record(ext4_));
  EXPECT_FALSE(rescan({ext4_}));
  EXPECT_EQ(remounter_.calls.size(), 1u) << "took discard away from the admin again";
  EXPECT_EQ(status(ext4_).takeover,
            (TakeoverView{TakeoverStatus::Inline, kDiscardPutBack, std::nullopt}));
  controller_->policy_changed();
  EXPECT_TRUE(rescan({ext4_}));
  EXPECT_EQ(remounter_.calls.size(), 2u);
}

TEST_F(TakeoverControllerTest, TakesOverAgainAMountMadeSinceWithDiscard) {
  start(takeover_config());
  rescan({ext4_});
  rescan({ext4_off_});
  remounter_.mount_ids["/srv/a"] = 2;  // mounted again from fstab, with discard
  EXPECT_TRUE(rescan({ext4_}));
  ASSERT_EQ(remounter_.calls.size(), 2u);
  EXPECT_FALSE(remounter_.calls[1].discard);
  EXPECT_EQ(record(ext4_)->mount->mount_id, 2u);
}

TEST_F(TakeoverControllerTest, AdoptsItsMountAfterARestartInANewNamespaceByItsOptions) {
  StateMap state;
  state[ext4_.id].taken_over = TakeoverRecord{now - 1h, TakeoverOrigin::Policy,
                                              MountInstance{"boot-1", 7, 40, {"rw", "commit=30"}}};
  start(takeover_config(), state);
  EXPECT_FALSE(rescan({ext4_off_}));  // namespace 1, mount id 1: a new sandbox's copy
  EXPECT_EQ(status(ext4_).takeover.since, now - 1h);
  EXPECT_EQ(record(ext4_)->mount, (MountInstance{"boot-1", 1, 1, {"rw", "commit=30"}}));
  controller_->stop(now);
  ASSERT_EQ(remounter_.calls.size(), 1u);
  EXPECT_TRUE(remounter_.calls[0].discard);
}

TEST_F(TakeoverControllerTest, ForgetsATakeoverOfAnotherBootOrOfOtherOptions) {
  for (const MountInstance& then : {MountInstance{"boot-0", 1, 1, {"rw", "commit=30"}},
                                    MountInstance{"boot-1", 7, 40, {"rw", "commit=5"}}}) {
    StateMap state;
    state[ext4_.id].taken_over = TakeoverRecord{now - 1h, TakeoverOrigin::Policy, then};
    start(takeover_config(), state);
    rescan({ext4_off_});
    EXPECT_FALSE(record(ext4_)) << then.boot_id;
    controller_->stop(now);
    EXPECT_TRUE(remounter_.calls.empty()) << then.boot_id;
  }
}

}  // namespace
}  // namespace trimd::test
