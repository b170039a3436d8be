// The delay lock on sleep and shutdown, against a fake logind and a fake
// daemon: taken while a pass may trim, let go when none may; when a sleep
// comes, the chunks are stopped and the lock goes once their runners are
// gone (logged first), within a bound; after the wake the passes resume and
// the lock is taken again. Without logind nothing changes.
#include <fcntl.h>
#include <poll.h>
#include <spdlog/sinks/base_sink.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "event_loop.hpp"
#include "log_event.hpp"
#include "sleep_watch.hpp"

namespace trimd {
namespace {

using namespace std::chrono_literals;

// A pipe: logind keeps the read end and sees EOF once trimd's copy of the
// write end (the lock) is closed.
struct LockPipe {
  UniqueFd read_end;
  UniqueFd write_end;
  LockPipe() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe2");
    read_end = UniqueFd(fds[0]);
    write_end = UniqueFd(fds[1]);
  }
  bool released() const {
    pollfd p{read_end.get(), POLLIN, 0};
    return ::poll(&p, 1, 0) == 1 && (p.revents & POLLHUP);
  }
};

class FakeLogind final : public Logind {
 public:
  void inhibit(const std::string& why, std::function<void(Lock)> done) override {
    whys.push_back(why);
    pending.push_back(std::move(done));
  }
  void on_prepare(Prepare handler) override { prepare = std::move(handler); }

  // Answers the oldest Inhibit with a lock; returns logind's end of it.
  std::unique_ptr<LockPipe> grant() {
    auto pipe = std::make_unique<LockPipe>();
    answer(Lock{std::move(pipe->write_end), false, {}});
    return pipe;
  }
  void answer(Lock lock) {
    auto done = std::move(pending.front());
    pending.erase(pending.begin());
    done(std::move(lock));
  }

  std::vector<std::string> whys;
  std::vector<std::function<void(Lock)>> pending;
  Prepare prepare;
};

class FakeDaemon final : public SleepClient {
 public:
  bool lock_wanted(TimePoint) const override { return wanted; }
  std::size_t stop_chunks(TimePoint) override {
    ++stops;
    return std::exchange(in_kernel_before_stop, 0);
  }
  std::size_t runners_left() const override { return runners; }
  void resume(TimePoint) override { ++resumes; }

  bool wanted = false;
  std::size_t in_kernel_before_stop = 0;
  std::size_t runners = 0;
  int stops = 0;
  int resumes = 0;
};

// Keeps each event's fields, and whether the lock was still held when it was logged.
class EventSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  std::function<bool()> lock_released;
  std::vector<LogFields> events;
  std::vector<spdlog::level::level_enum> levels;
  std::vector<bool> released_then;
  std::vector<std::string> debug_lines;

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    if (current_log_fields().empty()) {
      if (msg.level == spdlog::level::debug)
        debug_lines.emplace_back(msg.payload.data(), msg.payload.size());
      levels.push_back(msg.level);
      return;
    }
    events.push_back(current_log_fields());
    levels.push_back(msg.level);
    released_then.push_back(lock_released && lock_released());
  }
  void flush_() override {}
};

std::string field(const LogFields& fields, const std::string& name) {
  for (const auto& f : fields)
    if (f.name == name) return f.value;
  return {};
}

class SleepWatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    previous_ = spdlog::default_logger();
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("test", sink_));
    spdlog::set_level(spdlog::level::debug);
  }
  void TearDown() override { spdlog::set_default_logger(previous_); }

  // A pass may trim, and logind granted the lock.
  std::unique_ptr<LockPipe> holding() {
    daemon.wanted = true;
    watch.update(now, mono);
    auto pipe = logind.grant();
    EXPECT_TRUE(watch.holds_lock());
    return pipe;
  }
  std::vector<LogFields> stopped_events() const {
    std::vector<LogFields> out;
    for (const auto& e : sink_->events)
      if (field(e, "MESSAGE_ID") == message_id(EventId::StoppedForSleep)) out.push_back(e);
    return out;
  }
  bool any_warning() const {
    for (auto level : sink_->levels)
      if (level >= spdlog::level::warn) return true;
    return false;
  }

  TimePoint now = Clock::from_time_t(1'800'000'000);
  SteadyPoint mono = SteadyPoint{} + 1h;
  EventLoop loop;
  FakeLogind logind;
  FakeDaemon daemon;
  SleepWatch watch{loop, logind, daemon};
  std::shared_ptr<EventSink> sink_ = std::make_shared<EventSink>();
  std::shared_ptr<spdlog::logger> previous_;
};

TEST_F(SleepWatchTest, TakesTheLockWhileAPassMayTrimAndLetsItGoWhenNoneMay) {
  watch.update(now, mono);
  EXPECT_TRUE(logind.whys.empty()) << "nothing to trim: no lock asked for";
  auto pipe = holding();
  ASSERT_EQ(logind.whys.size(), 1u);
  EXPECT_FALSE(logind.whys[0].empty()) << "systemd-inhibit --list shows why";
  EXPECT_FALSE(pipe->released());
  watch.update(now, mono);
  EXPECT_EQ(logind.whys.size(), 1u) << "held: not asked again";

  daemon.wanted = false;
  watch.update(now, mono);
  EXPECT_FALSE(watch.holds_lock());
  EXPECT_TRUE(pipe->released());
}

TEST_F(SleepWatchTest, AsksOnceWhileAnAnswerIsPendingAndClosesALockThatCameTooLate) {
  daemon.wanted = true;
  watch.update(now, mono);
  watch.update(now, mono);
  EXPECT_EQ(logind.pending.size(), 1u);
  daemon.wanted = false;
  auto pipe = logind.grant();
  EXPECT_FALSE(watch.holds_lock());
  EXPECT_TRUE(pipe->released()) << "no pass may trim any more: the late lock is closed";
}

TEST_F(SleepWatchTest, ASleepStopsTheChunksAndTheLockGoesOnceTheirRunnersAreGoneLoggedFirst) {
  auto pipe = holding();
  sink_->lock_released = [&] { return pipe->released(); };
  daemon.in_kernel_before_stop = 1;
  daemon.runners = 1;  // killed, not reaped yet
  ASSERT_TRUE(logind.prepare);
  logind.prepare(PowerDown::Sleep, true);
  EXPECT_EQ(daemon.stops, 1);
  EXPECT_FALSE(pipe->released()) << "the runner may still be inside FITRIM";
  EXPECT_TRUE(stopped_events().empty());

  daemon.runners = 0;  // reaped: the daemon's pump calls update()
  watch.update(now, mono + 5ms);
  EXPECT_TRUE(pipe->released());
  const auto events = stopped_events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(field(events[0], "REASON"), "sleep");
  EXPECT_EQ(field(events[0], "CHUNKS"), "1");
  EXPECT_FALSE(field(events[0], "DURATION_USEC").empty());
  ASSERT_EQ(sink_->released_then.size(), 1u);
  EXPECT_FALSE(sink_->released_then[0]) << "the event is logged before the lock goes";

  daemon.wanted = true;
  watch.update(now, mono + 1s);
  EXPECT_EQ(logind.whys.size(), 1u) << "going to sleep: the lock is not taken again";
}

TEST_F(SleepWatchTest, TheLockGoesAfterTheBoundWhenARunnerStaysInTheKernel) {
  auto pipe = holding();
  daemon.in_kernel_before_stop = 1;
  daemon.runners = 1;
  watch.prepare(PowerDown::Shutdown, true, now, mono);
  watch.update(now, mono + SleepWatch::kReleaseBound - 1ms);
  EXPECT_FALSE(pipe->released());
  watch.update(now, mono + SleepWatch::kReleaseBound);
  EXPECT_TRUE(pipe->released());
  const auto events = stopped_events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(field(events[0], "REASON"), "shutdown");
  EXPECT_TRUE(any_warning()) << "a runner left in the kernel is worth a warning";
}

TEST_F(SleepWatchTest, WithNothingRunningTheLockGoesAtOnce) {
  auto pipe = holding();
  watch.prepare(PowerDown::Sleep, true, now, mono);
  EXPECT_TRUE(pipe->released());
  ASSERT_EQ(stopped_events().size(), 1u);
  EXPECT_EQ(field(stopped_events()[0], "CHUNKS"), "0");
}

TEST_F(SleepWatchTest, AfterTheWakeThePassesResumeAndTheLockIsTakenAgain) {
  auto pipe = holding();
  watch.prepare(PowerDown::Sleep, true, now, mono);
  EXPECT_EQ(daemon.resumes, 0);
  watch.prepare(PowerDown::Sleep, false, now + 8h, mono + 1s);
  EXPECT_EQ(daemon.resumes, 1);
  ASSERT_EQ(logind.whys.size(), 2u) << "the lock is asked for again";
  auto again = logind.grant();
  EXPECT_TRUE(watch.holds_lock());
  EXPECT_FALSE(again->released());
}

TEST_F(SleepWatchTest, ACancelledShutdownResumesToo) {
  auto pipe = holding();
  watch.prepare(PowerDown::Shutdown, true, now, mono);
  watch.prepare(PowerDown::Shutdown, false, now, mono + 1s);
  EXPECT_EQ(daemon.resumes, 1);
  EXPECT_EQ(logind.whys.size(), 2u);
}

TEST_F(SleepWatchTest, AWakeWithoutASleepChangesNothing) {
  watch.prepare(PowerDown::Sleep, false, now, mono);
  EXPECT_EQ(daemon.resumes, 0);
}

TEST_F(SleepWatchTest, WithoutLogindNothingChangesAndItIsSaidOnceAtDebugLevel) {
  daemon.wanted = true;
  watch.update(now, mono);
  logind.answer(Logind::Lock{UniqueFd{}, true, "org.freedesktop.DBus.Error.ServiceUnknown"});
  EXPECT_FALSE(watch.holds_lock());
  watch.update(now, mono + 1s);
  EXPECT_TRUE(logind.pending.empty()) << "not asked again at every turn";
  watch.update(now, mono + SleepWatch::kRetryAfter);
  ASSERT_EQ(logind.pending.size(), 1u);
  logind.answer(Logind::Lock{UniqueFd{}, true, "org.freedesktop.DBus.Error.ServiceUnknown"});
  EXPECT_FALSE(any_warning());
  int said = 0;
  for (const auto& line : sink_->debug_lines)
    if (line.find("logind") != std::string::npos) ++said;
  EXPECT_EQ(said, 1);
  // And a sleep still stops and resumes the passes (logind may come later).
  watch.prepare(PowerDown::Sleep, true, now, mono);
  EXPECT_EQ(daemon.stops, 1);
}

TEST_F(SleepWatchTest, ARefusalIsAWarningOnceAndAskedAgainLater) {
  daemon.wanted = true;
  watch.update(now, mono);
  logind.answer(Logind::Lock{UniqueFd{}, false, "org.freedesktop.DBus.Error.AccessDenied"});
  EXPECT_TRUE(any_warning());
  watch.update(now, mono + SleepWatch::kRetryAfter);
  EXPECT_EQ(logind.whys.size(), 2u);
}

}  // namespace
}  // namespace trimd
