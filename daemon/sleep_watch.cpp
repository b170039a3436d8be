#include "sleep_watch.hpp"

#include <spdlog/spdlog.h>

#include "log_event.hpp"
#include "units.hpp"

namespace trimd {

namespace {

// What `systemd-inhibit --list` shows in its WHY column.
constexpr const char* kWhy = "A trim pass is under way: its FITRIM call is stopped first";

}  // namespace

const char* to_string(PowerDown what) {
  switch (what) {
    case PowerDown::Sleep: return "sleep";
    case PowerDown::Shutdown: return "shutdown";
  }
  return "sleep";
}

SleepWatch::SleepWatch(EventLoop& loop, Logind& logind, SleepClient& client)
    : logind_(logind), client_(client),
      bound_(loop, [this] { update(Clock::now(), SteadyClock::now()); }) {
  logind_.on_prepare([this](PowerDown what, bool coming) {
    prepare(what, coming, Clock::now(), SteadyClock::now());
  });
}

void SleepWatch::update(TimePoint now, SteadyPoint mono) {
  switch (phase_) {
    case Phase::Stopping:
      if (client_.runners_left() == 0 || mono - stop_since_ >= kReleaseBound)
        finish_stop(now, mono);
      return;
    case Phase::Down: return;
    case Phase::Awake: break;
  }
  const bool wanted = client_.lock_wanted(now);
  if (!wanted && holds_lock()) {
    lock_.reset();
    spdlog::debug("no pass may trim now: the delay lock on sleep and shutdown is released");
  }
  if (wanted && !holds_lock() && !asking_ && (!retry_at_ || mono >= *retry_at_)) ask(mono);
}

void SleepWatch::ask(SteadyPoint mono) {
  asking_ = true;
  retry_at_ = mono + kRetryAfter;
  logind_.inhibit(kWhy, [this](Logind::Lock lock) { granted(std::move(lock)); });
}

void SleepWatch::granted(Logind::Lock lock) {
  asking_ = false;
  if (lock.fd.get() < 0) {
    if (lock.no_logind) {
      if (!said_no_logind_)
        spdlog::debug("no logind on the bus: passes take no lock on sleep and shutdown");
      said_no_logind_ = true;
    } else {
      spdlog::log(said_refused_ ? spdlog::level::debug : spdlog::level::warn,
                  "logind refused a delay lock on sleep and shutdown ({}); asking again in {}",
                  lock.error, format_duration(kRetryAfter));
      said_refused_ = true;
    }
    return;
  }
  retry_at_.reset();
  // Asked before a sleep came, or when a pass still wanted it: a lock that
  // came too late is closed at once (the fd goes with `lock`).
  if (phase_ != Phase::Awake || !client_.lock_wanted(Clock::now())) return;
  lock_ = std::move(lock.fd);
  spdlog::debug("holding a delay lock on sleep and shutdown while passes may trim");
}

void SleepWatch::prepare(PowerDown what, bool coming, TimePoint now, SteadyPoint mono) {
  if (coming) {
    if (phase_ != Phase::Awake) return;
    phase_ = Phase::Stopping;
    what_ = what;
    stop_since_ = mono;
    held_ = holds_lock();
    stopped_ = client_.stop_chunks(now);
    bound_.arm_in(kReleaseBound);
    update(now, mono);
    return;
  }
  if (phase_ == Phase::Awake) return;
  if (phase_ == Phase::Stopping) finish_stop(now, mono);
  phase_ = Phase::Awake;
  spdlog::info("back from {}: the passes go on from their cursors once the disks are idle",
               to_string(what));
  client_.resume(now);
  retry_at_.reset();
  update(now, mono);
}

void SleepWatch::finish_stop(TimePoint /*now*/, SteadyPoint mono) {
  bound_.disarm();
  phase_ = Phase::Down;
  const std::size_t left = client_.runners_left();
  const auto took = std::chrono::duration_cast<Duration>(mono - stop_since_);
  const double took_ms = static_cast<double>(took.count()) / 1000.0;
  if (held_ || stopped_ > 0) {
    log_event(EventId::StoppedForSleep, left > 0 ? spdlog::level::warn : spdlog::level::info,
              {{"REASON", to_string(what_)},
               {"CHUNKS", std::to_string(stopped_)},
               {"DURATION_USEC", std::to_string(took.count())}},
              left > 0 ? fmt::format("{} coming: {} FITRIM runner(s) still in the kernel after "
                                     "{:.1f} ms; letting the delay lock go anyway",
                                     to_string(what_), left, took_ms)
                       : fmt::format("{} coming: {} chunk(s) stopped, their passes go on "
                                     "afterwards; delay lock released after {:.1f} ms",
                                     to_string(what_), stopped_, took_ms));
  } else {
    spdlog::debug("{} coming: nothing to stop", to_string(what_));
  }
  lock_.reset();  // after the log line: it is in the journal before the sleep
}

}  // namespace trimd
