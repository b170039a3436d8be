// The daemon's event loop measures how late its timers come (the bus's
// EventLoopLatenessMaxUSec): a timer that was due while a callback held the
// loop waited at least as long as the callback held it past the due time.
// Only lower bounds: how much later a loaded machine makes it is not asserted.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "event_loop.hpp"

namespace trimd {
namespace {

using namespace std::chrono_literals;

// Holds the loop for about `time` and says how long it really held it.
Duration hold_the_loop(Duration time) {
  const auto start = SteadyClock::now();
  std::this_thread::sleep_for(time);
  return std::chrono::duration_cast<Duration>(SteadyClock::now() - start);
}

TEST(EventLoop, IsLateByNothingBeforeAnyTimerCame) {
  const EventLoop loop;
  EXPECT_EQ(loop.lateness_max(), Duration{0});
}

TEST(EventLoop, ATimerDueWhileACallbackHeldTheLoopCountsTheWaitAsLateness) {
  EventLoop loop;
  Timer second(loop, [&] { loop.quit(); });
  Duration held{0};
  Timer first(loop, [&] {
    second.arm_in(Duration{1});
    held = hold_the_loop(50ms);
  });
  first.arm_in(Duration{1});
  loop.run();
  ASSERT_GT(held, Duration{0});
  EXPECT_GE(loop.lateness_max(), held - Duration{1});
}

// A periodic timer that missed several periods has waited since the first
// it missed, not since the last.
TEST(EventLoop, APeriodicTimerIsLateFromTheFirstPeriodItMissed) {
  EventLoop loop;
  constexpr Duration kPeriod = 10ms;
  Timer periodic(loop, [&] { loop.quit(); });
  Duration held{0};
  Timer hog(loop, [&] { held = hold_the_loop(60ms); });
  periodic.arm_every(kPeriod);
  hog.arm_in(Duration{1});
  loop.run();
  EXPECT_GE(loop.lateness_max(), held - kPeriod);
}

TEST(EventLoop, KeepsTheLargestLateness) {
  EventLoop loop;
  loop.note_lateness(Duration{300});
  loop.note_lateness(Duration{100});
  loop.note_lateness(Duration{-5});
  EXPECT_EQ(loop.lateness_max(), Duration{300});
}

// defer(): work that many events of one turn ask for, done once after them.
TEST(EventLoop, RunsDeferredWorkAfterTheTurnInTheOrderItWasDeferred) {
  EventLoop loop;
  std::vector<std::string> order;
  Timer once(loop, [&] {
    loop.defer([&] { order.push_back("first deferred"); });
    loop.defer([&] { order.push_back("second deferred"); });
    order.push_back("the callback");
  });
  Timer stop(loop, [&] { loop.quit(); });
  once.arm_in(Duration{1});
  stop.arm_in(20ms);
  loop.run();
  EXPECT_EQ(order, (std::vector<std::string>{"the callback", "first deferred", "second deferred"}));
}

TEST(EventLoop, WorkDeferredByDeferredWorkWaitsForTheNextTurnWithoutStarvingTheFds) {
  EventLoop loop;
  int passes = 0;
  std::function<void()> again = [&] {
    ++passes;
    loop.defer(again);  // for ever, unless the fds get their turn
  };
  Timer stop(loop, [&] { loop.quit(); });
  Timer start(loop, [&] {
    loop.defer(again);
    stop.arm_in(Duration{1});
  });
  start.arm_in(Duration{1});
  loop.run();  // returns only if the timer got its turn between the passes
  EXPECT_GT(passes, 0);
}

TEST(EventLoop, DoesDeferredWorkEvenWhenACallbackQuitTheLoop) {
  EventLoop loop;
  bool done = false;
  Timer once(loop, [&] {
    loop.defer([&] { done = true; });
    loop.quit();
  });
  once.arm_in(Duration{1});
  loop.run();
  EXPECT_TRUE(done);
}

}  // namespace
}  // namespace trimd
