// read_regular_file: what trimd does when its config or state path is not a
// plain file (issue 8, F8): refuse at once, never block or follow.
#include <sys/stat.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "fifo_guard.hpp"
#include "regular_file.hpp"

namespace trimd {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class RegularFile : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "trimd-file-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string write(const std::string& name, const std::string& text) {
    std::ofstream{dir_ / name} << text;
    return (dir_ / name).string();
  }
  // The message read_regular_file refuses `path` with, not blocking on it.
  std::string refusal(const std::string& path) {
    return test::without_blocking_on(path, [&]() -> std::string {
      try {
        read_regular_file(path, 1024);
      } catch (const FileRefused& e) {
        return e.what();
      }
      return "(read)";
    });
  }
  fs::path dir_;
};

TEST_F(RegularFile, ReadsAPlainFileWhole) {
  EXPECT_EQ(read_regular_file(write("a.toml", "x = 1\n"), 1024), "x = 1\n");
}

TEST_F(RegularFile, ReadsNothingForAMissingFile) {
  EXPECT_EQ(read_regular_file((dir_ / "missing").string(), 1024), std::nullopt);
}

TEST_F(RegularFile, RefusesAFifoAtOnceInsteadOfWaitingForAWriter) {
  const auto fifo = (dir_ / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(refusal(fifo), "is a FIFO, not a regular file");
}

TEST_F(RegularFile, RefusesACharacterDeviceThatNeverEnds) {
  EXPECT_EQ(refusal("/dev/zero"), "is a character device, not a regular file");
}

TEST_F(RegularFile, RefusesADirectory) { EXPECT_EQ(refusal(dir_.string()), "Is a directory"); }

TEST_F(RegularFile, RefusesToFollowASymbolicLink) {
  const auto target = write("target", "secret");
  fs::create_symlink(target, dir_ / "link");
  EXPECT_THAT(refusal((dir_ / "link").string()), HasSubstr("is a symbolic link"));
}

TEST_F(RegularFile, FollowsALinkToARegularFileWhenAskedTo) {
  const auto target = write("target", "policy");
  fs::create_symlink(target, dir_ / "link");
  EXPECT_EQ(read_regular_file((dir_ / "link").string(), 1024, Links::Follow), "policy");
}

TEST_F(RegularFile, RefusesALinkToAFifoEvenWhenFollowingLinks) {
  const auto fifo = (dir_ / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  fs::create_symlink(fifo, dir_ / "link");
  try {
    read_regular_file((dir_ / "link").string(), 1024, Links::Follow);
    FAIL() << "a link to a FIFO was read";
  } catch (const FileRefused& e) {
    EXPECT_STREQ(e.what(), "is a FIFO, not a regular file");
  }
}

TEST_F(RegularFile, RefusesAFileLargerThanTheCapNamingTheCap) {
  EXPECT_EQ(read_regular_file(write("full", std::string(1024, 'x')), 1024)->size(), 1024u);
  EXPECT_EQ(refusal(write("over", std::string(1025, 'x'))),
            "is larger than 1 KiB, the most trimd reads");
}

// stat_regular_file: the same checks for a file another program reads.
TEST_F(RegularFile, StatsAFileWithoutReadingItAndRefusesWhatReadingWould) {
  const auto file = write("client.key", std::string(4096, 'k'));
  ASSERT_EQ(::chmod(file.c_str(), 0640), 0);
  const auto st = stat_regular_file(file);
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->st_mode & 07777, 0640u);
  EXPECT_EQ(st->st_size, 4096);
  EXPECT_EQ(stat_regular_file((dir_ / "missing").string()), std::nullopt);

  const auto fifo = (dir_ / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto message = test::without_blocking_on(fifo, [&]() -> std::string {
    try {
      stat_regular_file(fifo, Links::Follow);
    } catch (const FileRefused& e) {
      return e.what();
    }
    return "(taken)";
  });
  EXPECT_EQ(message, "is a FIFO, not a regular file");
}

}  // namespace
}  // namespace trimd
