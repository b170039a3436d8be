// What the unit tests of files share: a scratch directory removed with the
// test, whole-file reads and writes, and a record-by-record comparison of
// states that names the field that differs.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>

#include "state_store.hpp"

namespace trimd::test {

inline std::string read_text(const std::filesystem::path& file) {
  std::ifstream in{file};
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

inline void write_text(const std::filesystem::path& file, const std::string& text) {
  std::ofstream{file} << text;
}

// A fresh directory under $TMPDIR, removed with everything in it.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& prefix) {
    std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
    if (::mkdtemp(pattern.data()) == nullptr)
      throw std::system_error(errno, std::generic_category());
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline void expect_same_record(const FsRecord& a, const FsRecord& b) {
  EXPECT_EQ(a.mount_point, b.mount_point);
  EXPECT_EQ(a.device, b.device);
  EXPECT_EQ(a.last_start, b.last_start);
  EXPECT_EQ(a.last_end, b.last_end);
  EXPECT_EQ(outcome_text(a.last_result), outcome_text(b.last_result));
  EXPECT_EQ(a.last_bytes, b.last_bytes);
  EXPECT_EQ(a.cursor, b.cursor);
  EXPECT_EQ(a.pass_start, b.pass_start);
  EXPECT_EQ(a.pass_bytes, b.pass_bytes);
  EXPECT_EQ(a.pass_waited, b.pass_waited);
  EXPECT_EQ(a.last_trimming, b.last_trimming);
  EXPECT_EQ(a.last_waited, b.last_waited);
  EXPECT_EQ(a.lifetime, b.lifetime);
  EXPECT_EQ(a.history, b.history);
  EXPECT_EQ(a.first_seen, b.first_seen);
  EXPECT_EQ(a.last_seen, b.last_seen);
  EXPECT_EQ(a.taken_over, b.taken_over);
}

inline void expect_same_state(const StateMap& a, const StateMap& b) {
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [id, record] : a) {
    SCOPED_TRACE(id);
    ASSERT_EQ(b.count(id), 1u);
    expect_same_record(record, b.at(id));
  }
}

}  // namespace trimd::test
