// trim --wait on a pipe: how many lines a pass is worth, with a fake clock.
#include <gtest/gtest.h>

#include "trim_view.hpp"

using namespace trimctl;
using namespace std::chrono_literals;

namespace {

class LinesViewTest : public ::testing::Test {
 protected:
  void SetUp() override {
    target_.filesystem.mount_point = "/mnt";
    target_.filesystem.state = "scheduled";
    view_ = make_lines_view([this](const std::string& line) { lines_.push_back(line); },
                            [this] { return now_; });
    view_->begin({&target_});
  }

  void set(const std::string& state, double progress, const std::string& reason = "") {
    target_.filesystem.state = state;
    target_.filesystem.progress = progress;
    target_.filesystem.state_reason = reason;
    if (state == "trimming") target_.started = true;
    view_->show({&target_}, target_);
  }

  TrimTarget target_;
  std::unique_ptr<TrimView> view_;
  std::vector<std::string> lines_;
  std::chrono::steady_clock::time_point now_{};
};

TEST_F(LinesViewTest, PrintsEveryTenthOfTheWayNotEveryPercent) {
  for (int percent = 0; percent <= 100; ++percent) set("trimming", percent / 100.0);
  EXPECT_EQ(lines_, (std::vector<std::string>{"/mnt: 0%", "/mnt: 10%", "/mnt: 20%", "/mnt: 30%",
                                              "/mnt: 40%", "/mnt: 50%", "/mnt: 60%", "/mnt: 70%",
                                              "/mnt: 80%", "/mnt: 90%", "/mnt: 100%"}));
}

TEST_F(LinesViewTest, PrintsASlowPassEveryTenSeconds) {
  set("trimming", 0.0);
  now_ += 4s;
  set("trimming", 0.01);
  now_ += 5s;
  set("trimming", 0.02);
  now_ += 1s;
  set("trimming", 0.03);  // ten seconds after the last line
  now_ += 9s;
  set("trimming", 0.04);
  EXPECT_EQ(lines_, (std::vector<std::string>{"/mnt: 0%", "/mnt: 3%"}));
}

TEST_F(LinesViewTest, PrintsEveryChangeOfStateAtOnceAndTheResult) {
  set("waiting", 0.0, "disk sdb is busy");
  set("waiting", 0.0, "disk sdb is busy");  // nothing new
  set("trimming", 0.01);
  set("waiting", 0.01, "disk sdb is busy");
  set("trimming", 0.02);
  set("paused", 0.02);
  target_.finished = true;
  target_.result = "success";
  target_.bytes = 1536ull << 20;
  target_.usec = 12300000;
  view_->show({&target_}, target_);
  EXPECT_EQ(lines_,
            (std::vector<std::string>{"/mnt: waiting (disk sdb is busy)", "/mnt: 1%",
                                      "/mnt: waiting (disk sdb is busy)", "/mnt: 2%",
                                      "/mnt: paused", "/mnt: success, 1.5 GiB trimmed in 12.3s"}));
}

TEST_F(LinesViewTest, ANewReasonToWaitWaitsTenSecondsForItsLine) {
  set("waiting", 0.0, "disk sdb is busy");
  set("waiting", 0.0, "disk sdc is busy");
  now_ += 10s;
  set("waiting", 0.0, "outside the window 01:00-06:00");
  EXPECT_EQ(lines_, (std::vector<std::string>{"/mnt: waiting (disk sdb is busy)",
                                              "/mnt: waiting (outside the window 01:00-06:00)"}));
}

}  // namespace
