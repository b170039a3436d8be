#include <gtest/gtest.h>

#include "status_line.hpp"

namespace trimd {
namespace {

using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;

const TimePoint kNow = from_usec(1'700'000'000'000'000);

FsStatus fs(const std::string& mount_point, FsState state) {
  FsStatus status;
  status.id = mount_point;
  status.mount_point = mount_point;
  status.state = state;
  return status;
}

FsStatus scheduled(const std::string& mount_point, Duration due_in) {
  FsStatus status = fs(mount_point, FsState::Scheduled);
  status.next_trim = kNow + due_in;
  return status;
}

FsStatus trimming(const std::string& mount_point, double progress) {
  FsStatus status = fs(mount_point, FsState::Trimming);
  status.progress = progress;
  return status;
}

TEST(StatusLine, SaysIdleWithNothingTracked) { EXPECT_EQ(status_line({}, kNow), "idle"); }

TEST(StatusLine, NamesTheRunningPassWaitingPassesAndTheNextDue) {
  const std::vector<FsStatus> all{trimming("/home", 0.427), fs("/srv", FsState::Waiting),
                                  scheduled("/", hours{49}), scheduled("/var", hours{72})};
  EXPECT_EQ(status_line(all, kNow), "trimming /home 42%, 1 waiting for idle disks; next: / in 2d");
}

TEST(StatusLine, SaysIdleAndWhatComesNextBetweenPasses) {
  EXPECT_EQ(status_line({scheduled("/", minutes{90})}, kNow), "idle; next: / in 1h");
}

TEST(StatusLine, CountsPausedAndFailedFilesystems) {
  const std::vector<FsStatus> all{fs("/a", FsState::Paused), fs("/b", FsState::Paused),
                                  fs("/c", FsState::Error)};
  EXPECT_EQ(status_line(all, kNow), "2 paused, 1 failed");
}

TEST(StatusLine, SaysNowForAPassAlreadyDue) {
  EXPECT_EQ(status_line({scheduled("/", -seconds{5})}, kNow), "idle; next: / now");
}

TEST(StatusLine, ListsEveryRunningPassWithItsProgressClamped) {
  const std::vector<FsStatus> all{trimming("/a", 0), trimming("/b", 1.5)};
  EXPECT_EQ(status_line(all, kNow), "trimming /a 0%, trimming /b 100%");
}

TEST(StatusLine, IgnoresUnsupportedAndDisabledFilesystems) {
  const std::vector<FsStatus> all{fs("/a", FsState::Unsupported), fs("/b", FsState::Disabled)};
  EXPECT_EQ(status_line(all, kNow), "idle");
}

TEST(CoarseDuration, KeepsOnlyTheLargestWholeUnit) {
  EXPECT_EQ(coarse_duration(hours{49}), "2d");
  EXPECT_EQ(coarse_duration(minutes{150}), "2h");
  EXPECT_EQ(coarse_duration(seconds{61}), "1min");
  EXPECT_EQ(coarse_duration(seconds{59}), "59s");
  EXPECT_EQ(coarse_duration(Duration{10}), "0s");
  EXPECT_EQ(coarse_duration(-seconds{3}), "0s");
}

}  // namespace
}  // namespace trimd
