// replace_file_atomically, both ways a new file starts (O_TMPFILE, and the
// random name of filesystems without it), in a directory others may write.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "atomic_file.hpp"
#include "fifo_guard.hpp"
#include "file_test_kit.hpp"

namespace fs = std::filesystem;
using trimd::TempFileKind;
using trimd::test::read_text;

namespace {

class AtomicFile : public testing::TestWithParam<TempFileKind> {
 protected:
  void SetUp() override {
    ASSERT_EQ(::chmod(dir_.c_str(), 01777), 0);  // like a collector's directory
  }
  void replace(const fs::path& file, const std::string& text) {
    trimd::replace_file_atomically(file, text, 0644, GetParam());
  }
  std::size_t entries() const {
    return static_cast<std::size_t>(
        std::distance(fs::directory_iterator(dir_), fs::directory_iterator()));
  }
  trimd::test::ScratchDir scratch_{"trimd-atomic"};
  const fs::path& dir_ = scratch_.path();
};

}  // namespace

TEST_P(AtomicFile, ReplacesTheFileWholeWithItsModeWhateverTheUmaskAndLeavesNoTemporaryFile) {
  const auto file = dir_ / "trimd.prom";
  const mode_t old_umask = ::umask(077);
  replace(file, "old\n");
  replace(file, "new\n");
  ::umask(old_umask);
  EXPECT_EQ(read_text(file), "new\n");
  struct stat st {};
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0644u);
  EXPECT_EQ(entries(), 1u);
}

TEST_P(AtomicFile, FifosAtGuessableNamesNeitherBlockItNorAreTouched) {
  const auto file = dir_ / "state.toml";
  const std::string pid = std::to_string(::getpid());
  const std::vector<std::string> names{"state.toml." + pid + ".tmp", ".state.toml." + pid + ".tmp",
                                       "state.toml.tmp", ".state.toml.tmp"};
  for (const auto& name : names) ASSERT_EQ(::mkfifo((dir_ / name).c_str(), 0666), 0) << name;
  trimd::test::without_blocking_on(dir_ / names[0], [&] { replace(file, "x = 1\n"); });
  EXPECT_EQ(read_text(file), "x = 1\n");
  for (const auto& name : names)
    EXPECT_EQ(fs::symlink_status(dir_ / name).type(), fs::file_type::fifo) << name;
  EXPECT_EQ(entries(), names.size() + 1);
}

TEST_P(AtomicFile, ASymbolicLinkAtTheFileIsReplacedNotWrittenThrough) {
  std::ofstream{dir_ / "elsewhere"} << "keep me";
  fs::create_symlink(dir_ / "elsewhere", dir_ / "trimd.prom");
  replace(dir_ / "trimd.prom", "x 1\n");
  EXPECT_EQ(read_text(dir_ / "elsewhere"), "keep me");
  EXPECT_FALSE(fs::is_symlink(dir_ / "trimd.prom"));
  EXPECT_EQ(read_text(dir_ / "trimd.prom"), "x 1\n");
}

TEST_P(AtomicFile, AFailedWriteKeepsThePreviousFileAndLeavesNoTemporaryOne) {
  const auto file = dir_ / "state.toml";
  replace(file, "old\n");
  // A file size limit makes write(2) fail with EFBIG, even for root.
  struct rlimit saved {};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit tiny = saved;
  tiny.rlim_cur = 4;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &tiny), 0);
  EXPECT_THROW(replace(file, "a longer new text\n"), std::system_error);
  ::setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_EQ(read_text(file), "old\n");
  EXPECT_EQ(entries(), 1u);
}

TEST_P(AtomicFile, AFifoWhereTheDirectoryShouldBeFailsAtOnce) {
  const auto not_a_directory = dir_ / "textfile";
  ASSERT_EQ(::mkfifo(not_a_directory.c_str(), 0666), 0);
  trimd::test::without_blocking_on(not_a_directory, [&] {
    EXPECT_THROW(replace(not_a_directory / "trimd.prom", "x 1\n"), std::system_error);
  });
}

INSTANTIATE_TEST_SUITE_P(BothWays, AtomicFile,
                         testing::Values(TempFileKind::Unnamed, TempFileKind::Named),
                         [](const testing::TestParamInfo<TempFileKind>& kind) {
                           return kind.param == TempFileKind::Unnamed ? "Unnamed" : "Named";
                         });
