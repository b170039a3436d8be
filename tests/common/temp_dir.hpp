// A temporary directory for a test, removed with everything in it; other
// users may enter it (a bus socket in it must be reachable by uid 65534).
#pragma once

#include <filesystem>
#include <string>

namespace trimd::test {

class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "trimd-bus-");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace trimd::test
