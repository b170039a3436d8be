// The manager's pass events carry MESSAGE_ID= and the fields trimd(8)
// promises, so that the journal answers "when was /home last trimmed and how
// much" without anyone parsing log wording.
#include <gmock/gmock.h>
#include <spdlog/sinks/base_sink.h>

#include <mutex>

#include "log_event.hpp"
#include "manager_fleet_fixture.hpp"

using namespace trimd;
using namespace trimd::test;
using namespace std::chrono_literals;
using ::testing::Contains;

namespace {

// Keeps the fields of every line logged through log_event().
class FieldSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  std::vector<LogFields> events;
  std::vector<spdlog::level::level_enum> levels;

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    if (current_log_fields().empty()) return;
    events.push_back(current_log_fields());
    levels.push_back(msg.level);
  }
  void flush_() override {}
};

std::string field(const LogFields& fields, const std::string& name) {
  for (const auto& f : fields)
    if (f.name == name) return f.value;
  return {};
}

class ManagerEvents : public ManagerTest {
 protected:
  void SetUp() override {
    previous_ = spdlog::default_logger();
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("test", sink_));
    spdlog::set_level(spdlog::level::debug);
  }
  void TearDown() override { spdlog::set_default_logger(previous_); }

  spdlog::level::level_enum level_of(EventId id, const std::string& mount_point) const {
    for (std::size_t i = 0; i < sink_->events.size(); ++i)
      if (field(sink_->events[i], "MESSAGE_ID") == message_id(id) &&
          field(sink_->events[i], "MOUNT_POINT") == mount_point)
        return sink_->levels[i];
    return spdlog::level::off;
  }

  std::vector<LogFields> events_with(EventId id) const {
    std::vector<LogFields> out;
    for (const auto& e : sink_->events)
      if (field(e, "MESSAGE_ID") == message_id(id)) out.push_back(e);
    return out;
  }

  std::shared_ptr<FieldSink> sink_ = std::make_shared<FieldSink>();
  std::shared_ptr<spdlog::logger> previous_;
};

TEST_F(ManagerEvents, APassLogsItsStartAndItsEndWithMountPointBytesAndDuration) {
  disks["loop0"] = {};
  auto m = make();
  m->update_filesystems({make_fs("/home", "loop0")}, now);
  pass_time(*m, 6);
  run_to_completion(*m);

  const auto started = events_with(EventId::PassStarted);
  ASSERT_EQ(started.size(), 1u);
  EXPECT_EQ(field(started[0], "MOUNT_POINT"), "/home");
  EXPECT_EQ(field(started[0], "DEVICE"), "/dev/loop0");
  EXPECT_EQ(field(started[0], "FSTYPE"), "ext4");
  const auto finished = events_with(EventId::PassFinished);
  ASSERT_EQ(finished.size(), 1u);
  EXPECT_EQ(field(finished[0], "MOUNT_POINT"), "/home");
  EXPECT_EQ(field(finished[0], "RESULT"), "success");
  EXPECT_EQ(field(finished[0], "BYTES"), "10000");  // 10 chunks, 1000 bytes each
  EXPECT_FALSE(field(finished[0], "DURATION_USEC").empty());
  EXPECT_TRUE(events_with(EventId::PassFailed).empty());
}

TEST_F(ManagerEvents, AFailedPassIsItsOwnKindOfEvent) {
  disks["loop0"] = {};
  auto m = make();
  auto jobs = track_and_start(*m, make_fs("/srv", "loop0"));
  ASSERT_EQ(jobs.size(), 1u);
  m->chunk_finished(jobs[0], failed(TrimStatus::Error), now, mono);

  const auto failures = events_with(EventId::PassFailed);
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(field(failures[0], "MOUNT_POINT"), "/srv");
  EXPECT_EQ(field(failures[0], "RESULT").rfind("failed", 0), 0u);
  EXPECT_TRUE(events_with(EventId::PassFinished).empty());
}

TEST_F(ManagerEvents, ADuePassOnBusyDisksSaysOnceThatItWaitsAndStartsWhenTheyAreIdle) {
  disks["loop0"] = {};
  busy.insert("loop0");
  auto m = make();
  m->update_filesystems({make_fs("/home", "loop0")}, now);
  for (int second = 0; second < 10; ++second) {
    pass_time(*m, 1);
    EXPECT_TRUE(m->take_jobs(now, mono).empty());
  }

  const auto waiting = events_with(EventId::WaitingForIdle);
  ASSERT_EQ(waiting.size(), 1u);  // when the wait began, not every second
  EXPECT_EQ(field(waiting[0], "MOUNT_POINT"), "/home");
  EXPECT_EQ(field(waiting[0], "DISK"), "loop0");
  EXPECT_EQ(level_of(EventId::WaitingForIdle, "/home"), spdlog::level::debug);
  EXPECT_TRUE(events_with(EventId::ChunkStarted).empty());
  EXPECT_TRUE(events_with(EventId::PassPaused).empty());  // nothing begun to pause

  busy.clear();
  pass_time(*m, 6);
  EXPECT_EQ(m->take_jobs(now, mono).size(), 1u);
  EXPECT_EQ(events_with(EventId::ChunkStarted).size(), 1u);
  EXPECT_EQ(events_with(EventId::WaitingForIdle).size(), 1u);
}

TEST_F(ManagerEvents, APreemptedChunkLogsWhereItWasCut) {
  disks["loop0"] = {};
  auto m = make();
  auto jobs = track_and_start(*m, make_fs("/data", "loop0"));
  ASSERT_EQ(jobs.size(), 1u);
  m->chunk_preempted(jobs[0], now, mono);

  const auto preempted = events_with(EventId::PassPreempted);
  ASSERT_EQ(preempted.size(), 1u);
  EXPECT_EQ(field(preempted[0], "MOUNT_POINT"), "/data");
  EXPECT_EQ(field(preempted[0], "OFFSET"), std::to_string(jobs[0].range.start));
}

// A held slot ends in the journal however it ends, so that the spans a
// host held read from it as Acquired then Released or Lost.
TEST_F(ManagerEvents, EveryEndOfAHeldSlotIsLoggedWithItsReason) {
  disks["loop0"] = {};
  FakeGate gate;
  auto m = make(fleet_config());
  m->set_fleet_gate(&gate);
  const DiscoveredFs fs = make_fs("/data", "loop0");
  track_and_start(*m, fs);
  const struct {
    SlotAnswer answer;
    const char* reason;
  } ends[] = {{SlotAnswer::Waiting, "waiting for etcd to renew this host's lease"},
              {SlotAnswer::Unreachable, "etcd does not renew the lease"},
              {SlotAnswer::Lost, "its claim is gone from etcd"}};
  for (const auto& end : ends) {
    m->fleet_answer(fs.id, SlotAnswer::Granted, {}, now);
    m->fleet_answer(fs.id, end.answer, end.reason, now);
    if (end.answer == SlotAnswer::Lost) m->take_jobs(now, mono);  // asks again
  }
  const auto acquired = events_with(EventId::FleetSlotAcquired);
  const auto lost = events_with(EventId::FleetSlotLost);
  EXPECT_EQ(acquired.size(), 3u);
  ASSERT_EQ(lost.size(), 3u);
  for (std::size_t i = 0; i < lost.size(); ++i) {
    EXPECT_EQ(field(lost[i], "REASON"), ends[i].reason);
    EXPECT_EQ(field(lost[i], "BACKEND"), "pool-a");
  }
  // Told again while not holding: nothing more to say.
  m->fleet_answer(fs.id, SlotAnswer::Waiting, "behind web3", now);
  EXPECT_EQ(events_with(EventId::FleetSlotLost).size(), 3u);
}

TEST_F(ManagerEvents, AFilesystemLeftAloneSaysWhy) {
  disks["loop0"] = {};
  Config config = quick_config();
  config.trim.enabled = false;
  auto m = make(config);
  m->update_filesystems({make_fs("/boot", "loop0")}, now);

  const auto skipped = events_with(EventId::FilesystemSkipped);
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_EQ(field(skipped[0], "MOUNT_POINT"), "/boot");
  EXPECT_FALSE(field(skipped[0], "REASON").empty());
}

// journalctl -p warning is for problems: a filesystem the admin left out
// is none, one that cannot take discards may be.
TEST_F(ManagerEvents, ASkippedFilesystemIsAWarningOnlyWhenItCannotBeTrimmed) {
  disks["loop0"] = {};
  disks["loop1"] = {};
  Config config = quick_config();
  config.overrides =
      parse_config("[[filesystem]]\nmatch = \"/boot\"\nenabled = false\n", "t.toml").overrides;
  auto m = make(config);
  DiscoveredFs no_discard = make_fs("/old", "loop1");
  no_discard.unsupported_reason = "the device does not support discard";
  m->update_filesystems({make_fs("/boot", "loop0"), no_discard}, now);

  EXPECT_EQ(level_of(EventId::FilesystemSkipped, "/boot"), spdlog::level::info);
  EXPECT_EQ(level_of(EventId::FilesystemSkipped, "/old"), spdlog::level::warn);
}

}  // namespace
