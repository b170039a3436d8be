#include "slowtrim_mount.hpp"

#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>
#include <sstream>
#include <stdexcept>

#include "wait_until.hpp"

namespace trimd::test {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::optional<std::string> missing_slowtrim() {
  if (::access(SLOWTRIM_BINARY, X_OK) != 0) return std::string("no slowtrim at " SLOWTRIM_BINARY);
  if (::access("/dev/fuse", R_OK | W_OK) != 0) return std::string("no /dev/fuse");
  return std::nullopt;
}

SlowTrimMount::SlowTrimMount(const LoopImage& image, Fs fs, int discard_latency_ms) {
  if (image.attached()) throw std::logic_error("SlowTrimMount over an attached image");
  std::string pattern = (fs::temp_directory_path() / "trimd-slowtrim-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp " + pattern);
  dir_ = pattern;
  fuse_dir_ = dir_ + "/fuse";
  mount_point_ = dir_ + "/mnt";
  fs::create_directories(fuse_dir_);
  fs::create_directories(mount_point_);
  try {
    start_slowtrim(image.backing_file(), discard_latency_ms);
    device_ = run_or_throw({"losetup", "--find", "--show", "--direct-io=off", fuse_dir_ + "/disk"});
    while (!device_.empty() && device_.back() == '\n') device_.pop_back();
    run_or_throw({"mount", "-t", fs_name(fs), "-o", "nodiscard", device_, mount_point_});
    mounted_ = true;
  } catch (...) {
    release();
    throw;
  }
}

void SlowTrimMount::start_slowtrim(const std::string& backing, int latency_ms) {
  const std::string latency = "--discard-latency=" + std::to_string(latency_ms);
  const pid_t parent = ::getpid();
  slowtrim_ = ::fork();
  if (slowtrim_ < 0) throw std::runtime_error("fork");
  if (slowtrim_ == 0) {
    ::setpgid(0, 0);  // a ^C to the test reaches us through the destructor only
    if (::getppid() != parent) ::_exit(127);
    const std::string stats = "--stats=" + dir_ + "/stats.json";
    ::execl(SLOWTRIM_BINARY, "slowtrim", latency.c_str(), "--per-mib=0.1", stats.c_str(),
            "--stats-interval=0", backing.c_str(), fuse_dir_.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  if (!wait_until([&] { return fs::exists(fuse_dir_ + "/disk"); }, 10s))
    throw std::runtime_error("slowtrim did not mount " + fuse_dir_);
}

namespace {

// The flat JSON slowtrim writes, one "key": number per line; other values
// (booleans) are left out.
std::map<std::string, std::uint64_t> read_counters(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::map<std::string, std::uint64_t> out;
  const std::string body = text.str();
  const std::regex pair(R"re("(\w+)":\s*(\d+))re");
  for (std::sregex_iterator it(body.begin(), body.end(), pair), end; it != end; ++it)
    out[(*it)[1]] = std::stoull((*it)[2]);
  return out;
}

}  // namespace

std::map<std::string, std::uint64_t> SlowTrimMount::counters() const {
  const std::string path = dir_ + "/stats.json";
  const auto before = read_counters(path);
  const std::uint64_t sequence = before.count("sequence") ? before.at("sequence") : 0;
  ::kill(slowtrim_, SIGUSR1);
  std::map<std::string, std::uint64_t> now;
  if (!wait_until(
          [&] {
            now = read_counters(path);
            return now.count("sequence") && now.at("sequence") > sequence;
          },
          10s))
    throw std::runtime_error("slowtrim wrote no counters to " + path);
  return now;
}

dev_t SlowTrimMount::mounted_dev() const {
  struct stat st {};
  if (::stat(mount_point_.c_str(), &st) != 0) throw std::runtime_error("stat " + mount_point_);
  return st.st_dev;
}

void SlowTrimMount::unmount() {
  if (!mounted_) return;
  // A trimd under test may still hold the mount point for a moment.
  if (!wait_until([&] { return ::umount2(mount_point_.c_str(), 0) == 0 || errno != EBUSY; }, 5s))
    ::umount2(mount_point_.c_str(), MNT_DETACH);
  mounted_ = false;
}

SlowTrimMount::~SlowTrimMount() { release(); }

void SlowTrimMount::release() noexcept {
  try {
    unmount();
    if (!device_.empty()) {
      run_command({"losetup", "-d", device_});
      const std::string sysfs = "/sys/block/" + loop_name() + "/loop/backing_file";
      wait_until([&] { return !fs::exists(sysfs); }, 10s);
      device_.clear();
    }
    if (slowtrim_ > 0) {
      ::kill(slowtrim_, SIGINT);  // slowtrim unmounts its FUSE filesystem on SIGINT
      if (!wait_until([&] { return ::waitpid(slowtrim_, nullptr, WNOHANG) == slowtrim_; }, 10s)) {
        ::kill(slowtrim_, SIGKILL);
        ::waitpid(slowtrim_, nullptr, 0);
      }
      slowtrim_ = -1;
    }
    ::umount2(fuse_dir_.c_str(), MNT_DETACH);  // EINVAL when slowtrim unmounted it: fine
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  } catch (const std::exception& e) {
    std::cerr << "slowtrim_mount: cleaning up " << dir_ << ": " << e.what() << '\n';
  }
}

}  // namespace trimd::test
