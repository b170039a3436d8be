// The manager and the fleet's cap on passes per backend, with a fake gate:
// when a slot is asked for and given back, what a pass does while it waits,
// and what it does when etcd is silent.
#include "manager_fleet_fixture.hpp"

using namespace trimd;
using namespace trimd::test;
using namespace std::chrono_literals;

class ManagerFleet : public ManagerTest {
 protected:
  void SetUp() override { disks["loop0"] = {}; }
  DiscoveredFs fs = make_fs("/mnt/a", "loop0");
  FakeGate gate;

  std::unique_ptr<Manager> make_gated(Config config = fleet_config()) {
    auto m = make(std::move(config));
    m->set_fleet_gate(&gate);
    return m;
  }
  std::unique_ptr<Manager> granted(Config config = fleet_config()) {
    auto m = make_gated(std::move(config));
    track_and_start(*m, fs);
    m->fleet_answer(fs.id, SlotAnswer::Granted, {}, now);
    return m;
  }
};

TEST_F(ManagerFleet, AFilesystemOnASharedBackendTrimsNothingBeforeItHoldsASlot) {
  auto m = make_gated();
  EXPECT_TRUE(track_and_start(*m, fs).empty());
  EXPECT_EQ(gate.asked, std::vector<std::string>{fs.id + "@pool-a"});
  const auto status = m->status(fs.id, now);
  EXPECT_EQ(status->state, FsState::Waiting);
  EXPECT_EQ(status->waiting_for, WaitingFor::FleetSlot);
  EXPECT_EQ(status->fleet_backend, "pool-a");
  EXPECT_FALSE(status->fleet_slot_held);

  m->fleet_answer(fs.id, SlotAnswer::Waiting, "pool-a: 1/1 slots held by web3:/srv", now);
  EXPECT_TRUE(m->take_jobs(now, mono).empty());
  EXPECT_EQ(m->status(fs.id, now)->state_reason, "pool-a: 1/1 slots held by web3:/srv");
  EXPECT_EQ(gate.asked.size(), 1u) << "asked once, not at every look";

  advance(30s);
  m->fleet_answer(fs.id, SlotAnswer::Granted, {}, now);
  EXPECT_EQ(m->take_jobs(now, mono).size(), 1u);
  EXPECT_TRUE(m->status(fs.id, now)->fleet_slot_held);
  EXPECT_EQ(m->fleet_slot_waited(), 30s);
}

TEST_F(ManagerFleet, NoSlotIsAskedForWhileTheDisksAreBusy) {
  auto m = make_gated();
  m->update_filesystems({fs}, now);
  busy.insert("loop0");
  pass_time(*m, 6);
  EXPECT_TRUE(m->take_jobs(now, mono).empty());
  EXPECT_TRUE(gate.asked.empty());
  EXPECT_EQ(m->status(fs.id, now)->waiting_for, WaitingFor::DisksBusy);
}

TEST_F(ManagerFleet, AFilesystemWithoutABackendIsNotCoordinated) {
  Config config = fleet_config();
  config.fleet->backend.clear();
  config.trim.backend.clear();
  auto m = make_gated(config);
  EXPECT_EQ(track_and_start(*m, fs).size(), 1u);
  EXPECT_TRUE(gate.asked.empty());
  EXPECT_EQ(m->status(fs.id, now)->fleet_backend, "");
}

TEST_F(ManagerFleet, TheSlotIsGivenBackWhenThePassEnds) {
  auto m = granted();
  EXPECT_GT(run_to_completion(*m), 0);
  EXPECT_EQ(m->finished_passes().at(fs.id).result, PassResult::Success);
  EXPECT_EQ(gate.given_back, std::vector<std::string>{fs.id});
  EXPECT_TRUE(gate.open.empty());
  EXPECT_FALSE(m->status(fs.id, now)->fleet_slot_held);
}

TEST_F(ManagerFleet, TheSlotIsGivenBackWhenThePassIsCancelled) {
  auto m = granted();
  const auto jobs = m->take_jobs(now, mono);
  ASSERT_EQ(jobs.size(), 1u);
  m->cancel({fs.id}, now);
  m->chunk_interrupted(jobs[0], now, mono);
  EXPECT_EQ(gate.given_back, std::vector<std::string>{fs.id});
}

TEST_F(ManagerFleet, ASlotHeldUpByForegroundIoLongerThanOneLeaseTtlIsGivenBackAndAskedForAgain) {
  auto m = granted();
  auto jobs = m->take_jobs(now, mono);
  ASSERT_EQ(jobs.size(), 1u);
  m->chunk_preempted(jobs[0], now, mono);
  busy.insert("loop0");
  pass_time(*m, 10);
  m->take_jobs(now, mono);
  EXPECT_TRUE(gate.given_back.empty()) << "10 s held up is within the 15 s lease TTL";
  pass_time(*m, 6);
  m->take_jobs(now, mono);
  EXPECT_EQ(gate.given_back, std::vector<std::string>{fs.id});
  EXPECT_EQ(m->status(fs.id, now)->waiting_for, WaitingFor::DisksBusy);

  busy.clear();
  pass_time(*m, 6);
  EXPECT_TRUE(m->take_jobs(now, mono).empty()) << "it must queue again first";
  EXPECT_EQ(gate.asked.size(), 2u);
  EXPECT_EQ(m->status(fs.id, now)->waiting_for, WaitingFor::FleetSlot);
}

TEST_F(ManagerFleet, APausedPassGivesItsSlotBackAfterOneLeaseTtl) {
  auto m = granted();
  m->pause({fs.id}, now);
  advance(16s);
  m->take_jobs(now, mono);
  EXPECT_EQ(gate.given_back, std::vector<std::string>{fs.id});
}

TEST_F(ManagerFleet, ALostSlotStopsTheChunkInFlightAndThePassAsksAgain) {
  auto m = granted();
  const auto jobs = m->take_jobs(now, mono);
  ASSERT_EQ(jobs.size(), 1u);
  m->fleet_answer(fs.id, SlotAnswer::Lost, "the lease expired", now);
  EXPECT_EQ(m->jobs_to_stop(), std::vector<std::uint64_t>{jobs[0].serial});
  m->chunk_interrupted(jobs[0], now, mono);
  EXPECT_TRUE(m->jobs_to_stop().empty());
  EXPECT_EQ(m->persistent_state().at(fs.id).cursor, jobs[0].range.start);
  EXPECT_TRUE(m->take_jobs(now, mono).empty());
  EXPECT_EQ(gate.asked.size(), 2u);
}

TEST_F(ManagerFleet, UnreachableEtcdWithLocalTrimsAloneAfterUnreachableAfter) {
  auto m = make_gated(fleet_config(OnUnreachable::Local));
  track_and_start(*m, fs);
  m->fleet_answer(fs.id, SlotAnswer::Unreachable, "Connection refused", now);
  EXPECT_TRUE(m->take_jobs(now, mono).empty());
  EXPECT_NE(m->status(fs.id, now)->state_reason.find("etcd unreachable"), std::string::npos);
  EXPECT_EQ(m->next_wakeup(now, mono), now + 2min) << "going on alone is timed";
  pass_time(*m, 119);
  EXPECT_TRUE(m->take_jobs(now, mono).empty());
  pass_time(*m, 1);
  EXPECT_EQ(m->take_jobs(now, mono).size(), 1u);
}

TEST_F(ManagerFleet, UnreachableEtcdWithWaitNeverTrims) {
  auto m = make_gated(fleet_config(OnUnreachable::Wait));
  track_and_start(*m, fs);
  m->fleet_answer(fs.id, SlotAnswer::Unreachable, "Connection refused", now);
  pass_time(*m, 600);
  EXPECT_TRUE(m->take_jobs(now, mono).empty());
  EXPECT_EQ(m->status(fs.id, now)->waiting_for, WaitingFor::FleetSlot);
  EXPECT_GT(m->next_wakeup(now, mono), now + 30min) << "nothing timed while it waits";
}

TEST_F(ManagerFleet, AnUnmountedFilesystemGivesItsPlaceBack) {
  auto m = make_gated();
  track_and_start(*m, fs);
  m->update_filesystems({}, now);
  EXPECT_EQ(gate.given_back, std::vector<std::string>{fs.id});
}

TEST_F(ManagerFleet, ARestartedGateForgetsEverySlot) {
  auto m = granted();
  const auto jobs = m->take_jobs(now, mono);
  ASSERT_EQ(jobs.size(), 1u);
  m->fleet_restarted(now);
  EXPECT_EQ(m->jobs_to_stop(), std::vector<std::uint64_t>{jobs[0].serial});
  m->chunk_interrupted(jobs[0], now, mono);
  EXPECT_TRUE(m->take_jobs(now, mono).empty());
  EXPECT_EQ(gate.asked.size(), 2u);
}

// [fleet] duty (docs/fleet.md, "The duty budget and the lease").
namespace {

Config fleet_duty_config(double duty, unsigned max_concurrent) {
  Config config = fleet_config();
  config.fleet->duty = duty;
  config.fleet->max_concurrent = max_concurrent;
  return config;
}

ChunkResult costing(const ChunkJob& job, Duration device_time) {
  ChunkResult r;
  r.outcome.status = TrimStatus::Ok;
  r.outcome.bytes_reported = job.range.len;
  r.bytes_discarded = job.range.len;
  r.device_time = device_time;
  return r;
}

}  // namespace

TEST_F(ManagerFleet, EachSlotHolderKeepsToItsPartOfTheFleetsDuty) {
  auto m = granted(fleet_duty_config(0.01, 2));
  auto jobs = m->take_jobs(now, mono);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(m->status(fs.id, now)->duty, 0.005);
  m->chunk_finished(jobs[0], costing(jobs[0], 1s), now, mono);
  EXPECT_TRUE(m->take_jobs(now, mono).empty());
  EXPECT_EQ(m->status(fs.id, now)->state_reason,
            "pacing: 0.5% of pool-a's time, next chunk in 3min 19s");
  advance(199s);
  EXPECT_EQ(m->take_jobs(now, mono).size(), 1u);
}

TEST_F(ManagerFleet, ASlotHeldWhilePacingIsNotGivenBackForBeingIdle) {
  auto m = granted(fleet_duty_config(0.01, 1));
  auto jobs = m->take_jobs(now, mono);
  ASSERT_EQ(jobs.size(), 1u);
  m->chunk_finished(jobs[0], costing(jobs[0], 1s), now, mono);
  for (int i = 0; i < 98; ++i) {
    advance(1s);
    EXPECT_TRUE(m->take_jobs(now, mono).empty());
  }
  EXPECT_TRUE(gate.given_back.empty()) << "98 s of pacing, the lease TTL is 15 s";
  const auto status = m->status(fs.id, now);
  EXPECT_TRUE(status->fleet_slot_held);
  EXPECT_EQ(status->waiting_for, WaitingFor::Pacing);
  advance(1s);
  EXPECT_EQ(m->take_jobs(now, mono).size(), 1u) << "the pause is over: the next chunk, same slot";
  EXPECT_EQ(gate.asked.size(), 1u);
}

TEST_F(ManagerFleet, AfterThePassesLastChunkTheSlotIsKeptThroughItsPauseThenHandedOn) {
  auto m = make_gated(fleet_duty_config(0.02, 1));
  auto small = make_fs("/mnt/a", "loop0", GiB / 2);  // one chunk
  m->update_filesystems({small}, now);
  pass_time(*m, 6);
  m->take_jobs(now, mono);
  m->fleet_answer(small.id, SlotAnswer::Granted, {}, now);
  auto jobs = m->take_jobs(now, mono);
  ASSERT_EQ(jobs.size(), 1u);
  m->chunk_finished(jobs[0], costing(jobs[0], 1s), now, mono);
  EXPECT_EQ(m->finished_passes().at(small.id).result, PassResult::Success);
  EXPECT_TRUE(gate.given_back.empty()) << "49 s of pause to pay before the next holder starts";
  const auto status = m->status(small.id, now);
  EXPECT_TRUE(status->fleet_slot_held);
  EXPECT_EQ(status->state_reason, "pacing: 2% of pool-a's time, slot handed on in 49s");
  EXPECT_EQ(m->next_wakeup(now, mono), now + 49s);

  advance(48s);
  m->take_jobs(now, mono);
  EXPECT_TRUE(gate.given_back.empty());
  advance(1s);
  m->take_jobs(now, mono);
  EXPECT_EQ(gate.given_back, std::vector<std::string>{small.id});
  EXPECT_FALSE(m->status(small.id, now)->fleet_slot_held);
  EXPECT_EQ(m->status(small.id, now)->waiting_for, WaitingFor::Nothing);
}

TEST_F(ManagerFleet, AfterAPacingPauseBusyDisksHoldTheSlotForOneLeaseTtlFromItsEnd) {
  auto m = granted(fleet_duty_config(0.10, 1));
  auto jobs = m->take_jobs(now, mono);
  m->chunk_finished(jobs[0], costing(jobs[0], 2s), now, mono);
  busy.insert("loop0");
  pass_time(*m, 18);  // the 18 s pause, longer than the 15 s TTL
  m->take_jobs(now, mono);
  EXPECT_TRUE(gate.given_back.empty());
  pass_time(*m, 14);
  m->take_jobs(now, mono);
  EXPECT_TRUE(gate.given_back.empty()) << "14 s held up since the pause ended";
  pass_time(*m, 2);
  m->take_jobs(now, mono);
  EXPECT_EQ(gate.given_back, std::vector<std::string>{fs.id});
}

TEST_F(ManagerFleet, AStricterHostBudgetHoldsTheDisksLongerButNotTheSlot) {
  Config config = fleet_duty_config(0.10, 1);
  config.trim.duty = 0.01;
  auto m = make_gated(config);
  auto small = make_fs("/mnt/a", "loop0", GiB / 2);
  m->update_filesystems({small}, now);
  pass_time(*m, 6);
  m->take_jobs(now, mono);
  m->fleet_answer(small.id, SlotAnswer::Granted, {}, now);
  auto jobs = m->take_jobs(now, mono);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(m->status(small.id, now)->duty, 0.01);
  m->chunk_finished(jobs[0], costing(jobs[0], 1s), now, mono);
  advance(9s);
  m->take_jobs(now, mono);
  EXPECT_EQ(gate.given_back, std::vector<std::string>{small.id})
      << "the fleet's 10% needs 9 s; the host's own 1% is not the fleet's to wait for";
}
