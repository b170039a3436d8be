// Acceptance: trimd trims only while the disk below the filesystem is idle.
// A writer on the same filesystem keeps its loop device busy; the loop
// device's own discard counter says whether trimd trimmed meanwhile.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "loopfs.hpp"
#include "trimd_process.hpp"
#include "wait_until.hpp"

namespace trimd::test {
namespace {

using namespace std::chrono_literals;

constexpr std::uint64_t kImageMib = 256;
constexpr std::size_t kFiles = 200;
constexpr std::uint64_t kFileBytes = 256 * 1024;

// Idle window + a generous margin for a noisy machine.
constexpr auto kCompletesWithin = 1s + 20s;

constexpr const char* kIdleSettings = R"([idle]
window = "1s"
sample_interval = "200ms"
)";

// 4 KiB + fdatasync in a loop, over a 1 MiB ring of one file: hundreds of
// writes a second reach the loop device, far above max_iops.
class ForegroundWriter {
 public:
  explicit ForegroundWriter(const std::string& path)
      : fd_(::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600)) {
    if (fd_ < 0) throw std::runtime_error("cannot create " + path);
    thread_ = std::thread([this] { run(); });
    wait_until([&] { return writes_ >= 10 || failed_; }, 10s);  // it really writes
    if (failed_) {
      stop();
      ::close(fd_);
      throw std::runtime_error("cannot write " + path);
    }
  }
  ~ForegroundWriter() {
    stop();
    ::close(fd_);
  }
  ForegroundWriter(const ForegroundWriter&) = delete;
  ForegroundWriter& operator=(const ForegroundWriter&) = delete;

  void stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }

 private:
  void run() {
    std::vector<char> block(4096, 'w');
    for (std::uint64_t n = 0; !stop_; ++n) {
      const auto offset = static_cast<off_t>((n % 256) * block.size());
      if (::pwrite(fd_, block.data(), block.size(), offset) < 0 || ::fdatasync(fd_) != 0) {
        failed_ = true;
        return;
      }
      ++writes_;
    }
  }

  int fd_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> failed_{false};
  std::atomic<std::uint64_t> writes_{0};
  std::thread thread_;
};

class TrimIdleness : public ::testing::Test {
 protected:
  void SetUp() override {
    REQUIRE_ROOT_OR_FAIL();
    TRIMD_SKIP_OR_FAIL_IF(missing_tools(tools_for(Fs::Ext4)));
    fs_.emplace(fragmented_image(Fs::Ext4, kImageMib, kFiles, kFileBytes, kExt4SmallGroups));
  }

  LoopImage& image() { return fs_->image; }
  DiscardCounters discards() { return discard_counters(image().loop_name()); }
  std::string writer_file() { return image().mount_point() + "/foreground"; }

  TrimdSandbox sandbox_;
  std::optional<FragmentedImage> fs_;
};

TEST_F(TrimIdleness, WaitsForTheWriterToStopBeforeTrimming) {
  sandbox_.write_config(std::string(kIdleSettings) +
                        "[trim]\nchunk_size = \"32MiB\"\npause = \"0s\"\n");
  // A second filesystem on an idle disk: its whole pass shows that trimd
  // sampled past the idle window and trims what is idle meanwhile.
  LoopImage idle = LoopImage::create(64);
  idle.mkfs(Fs::Ext4, kExt4SmallGroups);
  idle.mount(kNoDiscard);
  ForegroundWriter writer(writer_file());
  const DiscardCounters before = discards();
  TrimdProcess trimd(sandbox_.args({"--once", image().mount_point(), idle.mount_point()}),
                     sandbox_.log_path("trimd"));
  // trimd's own word that it looked at the busy disk and held the pass back.
  const auto waiting = trimd.wait_for_event(EventId::WaitingForIdle, image().mount_point(), 10s);
  ASSERT_TRUE(waiting) << trimd.log();
  EXPECT_EQ(waiting->at("DISK"), image().loop_name()) << trimd.log();
  ASSERT_TRUE(trimd.wait_for_event(EventId::PassFinished, idle.mount_point(), kCompletesWithin))
      << trimd.log();
  EXPECT_TRUE(chunk_lines(trimd, image().mount_point()).empty()) << trimd.log();
  EXPECT_EQ(discards().sectors, before.sectors) << "discards reached the busy disk";

  writer.stop();
  EXPECT_EQ(trimd.wait_for_exit(kCompletesWithin), 0) << trimd.log();
  EXPECT_GT(discards().sectors, before.sectors) << trimd.log();
  EXPECT_TRUE(pass_success(trimd, image().mount_point())) << trimd.log();
  EXPECT_EQ(trimd.events(EventId::WaitingForIdle, image().mount_point()).size(), 1u)
      << "the writer ran throughout: one wait, then chunks\n"
      << trimd.log();
}

TEST_F(TrimIdleness, PausesAPassWhenTheWriterStartsAndFinishesItAfterwards) {
  // 256 MiB in 8 MiB chunks, 300 ms apart: a pass of about ten seconds.
  sandbox_.write_config(std::string(kIdleSettings) +
                        "[trim]\nchunk_size = \"8MiB\"\npause = \"300ms\"\n");
  const std::string& mnt = image().mount_point();
  TrimdProcess trimd(sandbox_.args({"--once", mnt}), sandbox_.log_path("trimd"));
  ASSERT_TRUE(trimd.wait_for_event(EventId::ChunkStarted, mnt, 20s, 3)) << trimd.log();

  // It may have paused already: FITRIM makes ext4 read block bitmaps, and
  // trimd counts those reads as foreground I/O (measured on 6.18).
  const std::size_t pauses_before = trimd.events(EventId::PassPaused, mnt).size();
  std::optional<ForegroundWriter> writer(std::in_place, writer_file());
  ASSERT_TRUE(trimd.wait_for_event(EventId::PassPaused, mnt, 10s, pauses_before + 1))
      << trimd.log();
  const std::size_t chunks_at_pause = chunk_lines(trimd, mnt).size();
  EXPECT_TRUE(trimd.running()) << trimd.log();

  writer.reset();
  EXPECT_EQ(trimd.wait_for_exit(kCompletesWithin + 20s), 0) << trimd.log();
  const auto summary = pass_success(trimd, mnt);
  ASSERT_TRUE(summary) << trimd.log();
  EXPECT_GT(summary->foreground_pauses, pauses_before) << trimd.log();
  EXPECT_EQ(summary->foreground_pauses, trimd.events(EventId::PassPaused, mnt).size());
  EXPECT_GT(summary->chunks, chunks_at_pause) << "the pass did not go on after the writer stopped";
  EXPECT_EQ(summary->chunks, chunk_lines(trimd, mnt).size());
}

}  // namespace
}  // namespace trimd::test
