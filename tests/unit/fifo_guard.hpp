// For tests of code that must not block on a FIFO: run it on another
// thread, and if it has not returned after a few seconds, open the FIFO's
// other end to release it (so the test ends) and fail.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <string>
#include <utility>

namespace trimd::test {

template <typename F>
auto without_blocking_on(const std::string& fifo, F&& f) {
  auto result = std::async(std::launch::async, std::forward<F>(f));
  if (result.wait_for(std::chrono::seconds{5}) != std::future_status::ready) {
    const int other_end = ::open(fifo.c_str(), O_RDWR | O_NONBLOCK);
    result.wait();
    if (other_end >= 0) ::close(other_end);
    ADD_FAILURE() << "blocked on the FIFO " << fifo;
  }
  return result.get();
}

}  // namespace trimd::test
