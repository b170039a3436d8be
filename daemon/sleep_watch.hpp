// Sleep and shutdown, as logind announces them. While a pass may run a
// chunk, trimd holds a "delay" lock on both; when one is coming it stops
// the chunks in flight (their cursors kept), logs it and lets the lock go,
// so that no FITRIM runner is left inside the kernel for the freezer to
// fail on (util-linux issue #2211) or for a shutdown to wait behind. After
// a sleep it takes the lock again and the passes go on from their cursors.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>

#include "event_loop.hpp"
#include "time.hpp"
#include "unique_fd.hpp"

namespace trimd {

// What logind says is coming: PrepareForSleep or PrepareForShutdown.
enum class PowerDown { Sleep, Shutdown };
const char* to_string(PowerDown what);  // "sleep", "shutdown"

// logind (org.freedesktop.login1.Manager) as far as trimd needs it: the
// real one on the bus (bus_logind.hpp), a fake in the unit tests.
class Logind {
 public:
  // The answer to Inhibit: the lock, or why there is none.
  struct Lock {
    UniqueFd fd;             // the lock lasts until every copy of it is closed
    bool no_logind = false;  // nobody serves org.freedesktop.login1
    std::string error;       // refused otherwise (the D-Bus error)
  };
  using Prepare = std::function<void(PowerDown what, bool coming)>;

  virtual ~Logind() = default;
  // Inhibit("sleep:shutdown", "trimd", why, "delay"); `done` runs later, on
  // the loop (never from inside this call).
  virtual void inhibit(const std::string& why, std::function<void(Lock)> done) = 0;
  // PrepareForSleep(b) and PrepareForShutdown(b): true before, false after.
  virtual void on_prepare(Prepare handler) = 0;
};

// What a sleep does to the passes: the daemon, which runs the chunks and
// tells the engine (Manager::sleep_coming, woke, chunks_may_start).
class SleepClient {
 public:
  virtual ~SleepClient() = default;
  // A chunk may start before anything changes: the lock is wanted.
  virtual bool lock_wanted(TimePoint now) const = 0;
  // Kill every chunk in flight (its cursor kept) and start none until
  // resume(); returns how many were killed.
  virtual std::size_t stop_chunks(TimePoint now) = 0;
  // Runners not yet gone (killed, but not reaped yet).
  virtual std::size_t runners_left() const = 0;
  // The machine is back: the disks count as busy, the passes go on.
  virtual void resume(TimePoint now) = 0;
};

class SleepWatch {
 public:
  // The lock is let go at the latest this long after PrepareFor*(true),
  // runners gone or not: logind waits InhibitDelayMaxSec (5 s by default)
  // at most anyway, and holding the lock longer only delays the sleep.
  static constexpr Duration kReleaseBound = std::chrono::seconds{3};
  // An Inhibit that failed is asked again after this long.
  static constexpr Duration kRetryAfter = std::chrono::minutes{1};

  SleepWatch(EventLoop& loop, Logind& logind, SleepClient& client);
  SleepWatch(const SleepWatch&) = delete;
  SleepWatch& operator=(const SleepWatch&) = delete;

  // After each change of the passes: take the lock or let it go, and end a
  // stop whose runners are gone.
  void update(TimePoint now, SteadyPoint mono);
  // logind's PrepareForSleep / PrepareForShutdown.
  void prepare(PowerDown what, bool coming, TimePoint now, SteadyPoint mono);
  bool holds_lock() const { return lock_.get() >= 0; }

 private:
  enum class Phase { Awake, Stopping, Down };
  void ask(SteadyPoint mono);
  void granted(Logind::Lock lock);
  void finish_stop(TimePoint now, SteadyPoint mono);

  Logind& logind_;
  SleepClient& client_;
  Timer bound_;
  Phase phase_ = Phase::Awake;
  UniqueFd lock_;
  bool asking_ = false;
  std::optional<SteadyPoint> retry_at_;
  bool said_no_logind_ = false;
  bool said_refused_ = false;
  // The stop under way: what is coming, since when, chunks killed, and
  // whether the lock was held when it began.
  PowerDown what_ = PowerDown::Sleep;
  SteadyPoint stop_since_{};
  std::size_t stopped_ = 0;
  bool held_ = false;
};

}  // namespace trimd
