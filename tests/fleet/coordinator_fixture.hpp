// Several trimd hosts' coordinators on one event loop, against whatever etcd
// the test starts: the news each hears, and the loop run until a state holds.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "fleet_coordinator.hpp"
#include "loop_wait.hpp"

namespace trimd::test {

class CoordinatorFixture : public testing::Test {
 protected:
  using Coordinator = fleet::Coordinator;
  using SlotNews = fleet::SlotNews;

  // A host named `name` with config_ (polling its backends every 100 ms,
  // unless told otherwise).
  std::unique_ptr<Coordinator> host(const std::string& name,
                                    Duration poll = std::chrono::milliseconds{100}) {
    return std::make_unique<Coordinator>(
        loop_, config_, name,
        [this, name](const SlotNews& news) {
          news_.push_back({name, news});
        },
        poll);
  }

  template <typename Done>
  bool run_until(Done done, Duration limit) {
    return run_loop_until(loop_, done, limit);
  }

  bool told(const std::string& host, const std::string& fs, SlotNews::Kind kind) const {
    for (const auto& [who, news] : news_)
      if (who == host && news.fs_id == fs && news.kind == kind) return true;
    return false;
  }

  // Every news heard, one line each, for a failure's message.
  std::string news_text() const {
    static constexpr const char* kKinds[] = {"granted", "waiting", "lost", "unreachable"};
    std::string out;
    for (const auto& [who, news] : news_)
      out += "\n  " + who + " " + news.fs_id + ": " + kKinds[static_cast<int>(news.kind)] + " " +
             news.reason;
    return out;
  }

  EventLoop loop_;
  FleetConfig config_;
  std::vector<std::pair<std::string, SlotNews>> news_;
};

}  // namespace trimd::test
