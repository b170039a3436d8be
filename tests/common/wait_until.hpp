// Waiting for a state instead of sleeping a guessed time: the one poll loop
// the system and bus tests share.
#pragma once

#include <chrono>
#include <thread>

namespace trimd::test {

// Polls `done` every `step` until it holds (true) or `timeout` passes
// (false); `done` is asked once more at the deadline.
template <typename Done>
bool wait_until(Done done, std::chrono::milliseconds timeout,
                std::chrono::milliseconds step = std::chrono::milliseconds{10}) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(step);
  }
  return true;
}

}  // namespace trimd::test
