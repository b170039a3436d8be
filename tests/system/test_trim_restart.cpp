// Acceptance: a pass survives a restart (SIGTERM persists the cursor, the
// next start resumes there), and SIGHUP with a broken policy keeps the old one.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "loopfs.hpp"
#include "trimd_process.hpp"

namespace trimd::test {
namespace {

using namespace std::chrono_literals;

constexpr std::uint64_t kImageMib = 512;
constexpr std::size_t kFiles = 400;
constexpr std::uint64_t kFileBytes = 256 * 1024;
constexpr std::uint64_t kChunkBytes = 16u << 20;  // 512 MiB: 32 chunks

constexpr auto kStopsWithin = 3500ms;  // "about 3 s": trimd waits up to 2 s for a FITRIM
constexpr auto kPassWithin = 60s;      // ~32 chunks 200 ms apart, on a noisy machine

std::string slow_config(const std::string& chunk_size) {
  return "[idle]\nwindow = \"1s\"\nsample_interval = \"200ms\"\n\n[trim]\nchunk_size = \"" +
         chunk_size + "\"\npause = \"200ms\"\n";
}

class TrimRestart : public ::testing::Test {
 protected:
  void SetUp() override {
    REQUIRE_ROOT_OR_FAIL();
    TRIMD_SKIP_OR_FAIL_IF(missing_tools(tools_for(Fs::Ext4)));
  }

  TrimdSandbox sandbox_;
};

// The chunk ends trimd logged: where a persisted cursor may stand.
bool is_a_chunk_end(const std::vector<ChunkLine>& chunks, std::uint64_t offset) {
  return std::any_of(chunks.begin(), chunks.end(),
                     [&](const ChunkLine& c) { return c.offset + c.length == offset; });
}

TEST_F(TrimRestart, ResumesAnInterruptedPassWhereItStoppedAndReclaimsEverything) {
  Twins twins = fragmented_twins(Fs::Ext4, kImageMib, kFiles, kFileBytes, kExt4SmallGroups);
  LoopImage& reference = twins.first;
  reference.mount(kNoDiscard);
  ASSERT_TRUE(run_command({"fstrim", reference.mount_point()}).ok());
  reference.unmount();

  LoopImage& twin = twins.second;
  twin.mount(kNoDiscard);
  const std::string& mnt = twin.mount_point();
  sandbox_.write_config(slow_config("16MiB"));
  const std::vector<std::string> command = sandbox_.args({"--once", mnt});

  std::uint64_t cursor = 0;
  {
    TrimdProcess first(command, sandbox_.log_path("first"));
    ASSERT_TRUE(first.wait_for_event(EventId::ChunkStarted, mnt, 30s, 5)) << first.log();
    first.send(SIGTERM);
    EXPECT_EQ(first.wait_for_exit(kStopsWithin), 0) << first.log();
    EXPECT_FALSE(pass_success(first, mnt)) << "the pass was not interrupted:\n" << first.log();
    const auto saved = state_cursor(sandbox_.state_file(), mnt);
    ASSERT_TRUE(saved) << "no cursor in " << sandbox_.state_file() << "\n" << first.log();
    cursor = *saved;
    EXPECT_GT(cursor, 0u);
    EXPECT_LT(cursor, twin.size_bytes());
    EXPECT_TRUE(is_a_chunk_end(chunk_lines(first, mnt), cursor)) << cursor << "\n" << first.log();
  }

  TrimdProcess second(command, sandbox_.log_path("second"));
  EXPECT_EQ(second.wait_for_exit(kPassWithin), 0) << second.log();
  const auto resumed = second.events(EventId::PassResumed, mnt);
  ASSERT_EQ(resumed.size(), 1u) << second.log();
  EXPECT_EQ(field_u64(resumed.front(), "OFFSET"), cursor) << second.log();
  const std::vector<ChunkLine> chunks = chunk_lines(second, mnt);
  ASSERT_FALSE(chunks.empty()) << second.log();
  EXPECT_EQ(chunks.front().offset, cursor) << second.log();
  EXPECT_EQ(chunks.back().offset + chunks.back().length, twin.size_bytes());
  EXPECT_TRUE(pass_success(second, mnt)) << second.log();
  EXPECT_FALSE(state_cursor(sandbox_.state_file(), mnt)) << "a finished pass left its cursor";

  twin.unmount();
  const std::uint64_t untrimmed_tolerance = twin_tolerance(reference.allocated_bytes());
  EXPECT_LE(twin.allocated_bytes(), reference.allocated_bytes() + untrimmed_tolerance)
      << "after the resumed pass " << mib(twin.allocated_bytes()) << " MiB, after fstrim "
      << mib(reference.allocated_bytes()) << " MiB";
  EXPECT_GE(twin.allocated_bytes() + untrimmed_tolerance, reference.allocated_bytes());
}

TEST_F(TrimRestart, KeepsTheOldConfigurationWhenAReloadFindsABrokenOne) {
  LoopImage image = LoopImage::create(256);
  image.mkfs(Fs::Ext4, kExt4SmallGroups);
  image.mount(kNoDiscard);
  const std::string& mnt = image.mount_point();
  sandbox_.write_config(slow_config("16MiB"));  // 256 MiB: 16 chunks
  TrimdProcess trimd(sandbox_.args({"--once", mnt}), sandbox_.log_path("trimd"));
  ASSERT_TRUE(trimd.wait_for_event(EventId::ChunkStarted, mnt, 30s, 2)) << trimd.log();

  sandbox_.write_config(slow_config("16MiB") + "max_depth = 3\n");  // line 8: no such key
  trimd.send(SIGHUP);
  const auto failed = trimd.wait_for_event(EventId::ReloadFailed, "", 10s);
  ASSERT_TRUE(failed) << trimd.log();
  EXPECT_EQ(failed->at("CONFIG_FILE"), sandbox_.config_path());
  EXPECT_EQ(field_u64(*failed, "CONFIG_LINE"), 8u);
  EXPECT_EQ(field_u64(*failed, "CONFIG_COLUMN"), 1u);
  const std::size_t chunks_then = chunk_lines(trimd, mnt).size();
  ASSERT_TRUE(trimd.wait_for_event(EventId::ChunkStarted, mnt, 10s, chunks_then + 2))
      << "trimd stopped trimming after the failed reload:\n"
      << trimd.log();
  // 1 KiB blocks: group 0 starts at 1 KiB, and the first chunk takes that
  // kibibyte with it (docs/design.md, "ext4").
  for (const ChunkLine& chunk : chunk_lines(trimd, mnt))
    EXPECT_EQ(chunk.length, (16u << 20) + (chunk.offset == 0 ? 1024u : 0u)) << chunk.offset;

  // A good policy is taken: the next chunks are of its size.
  sandbox_.write_config(slow_config("8MiB"));
  trimd.send(SIGHUP);
  ASSERT_TRUE(trimd.wait_for_event(EventId::ConfigReloaded, "", 10s)) << trimd.log();
  const std::size_t chunks_reloaded = chunk_lines(trimd, mnt).size();
  ASSERT_TRUE(trimd.wait_for_event(EventId::ChunkStarted, mnt, 10s, chunks_reloaded + 2))
      << trimd.log();
  EXPECT_EQ(chunk_lines(trimd, mnt).back().length, 8u << 20) << trimd.log();

  EXPECT_EQ(trimd.wait_for_exit(kPassWithin), 0) << trimd.log();
  EXPECT_TRUE(pass_success(trimd, mnt)) << trimd.log();
}

}  // namespace
}  // namespace trimd::test
