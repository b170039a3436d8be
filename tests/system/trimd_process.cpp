// The real trimd as a child process, and what the system tests read back.
#include "trimd_process.hpp"
#include "posix_util.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <toml++/toml.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <system_error>

#include "utf8.hpp"
#include "wait_until.hpp"

#ifndef TRIMD_BINARY
#error "TRIMD_BINARY must name the trimd binary under test"
#endif

namespace trimd::test {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// ---- TrimdSandbox -------------------------------------------------------------

TrimdSandbox::TrimdSandbox() {
  std::string pattern = (fs::temp_directory_path() / "trimd-systest-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) throw_errno("mkdtemp " + pattern);
  dir_ = pattern;
}

TrimdSandbox::~TrimdSandbox() {
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

void TrimdSandbox::write_config(const std::string& toml) const {
  const std::string temp = dir_ + "/.trimd.toml.tmp";
  {
    std::ofstream out(temp, std::ios::trunc);
    out << toml;
    if (!out.flush()) throw std::runtime_error("cannot write " + temp);
  }
  fs::rename(temp, config_path());
}

std::vector<std::string> TrimdSandbox::args(std::vector<std::string> first) const {
  first.insert(first.end(), {"--config", config_path(), "--state-dir", state_dir(), "--no-bus",
                             "--log-level", "debug", "--log-format", "json"});
  return first;
}

std::vector<std::string> TrimdSandbox::args_on_bus(const std::string& bus_address) const {
  auto words = args();
  std::erase(words, "--no-bus");
  words.insert(words.end(), {"--bus-address", bus_address});
  return words;
}

// ---- TrimdProcess ---------------------------------------------------------------

TrimdProcess::TrimdProcess(const std::vector<std::string>& args, std::string log_path)
    : TrimdProcess({}, args, std::move(log_path)) {}

TrimdProcess::TrimdProcess(const std::vector<std::string>& wrapper,
                           const std::vector<std::string>& args, std::string log_path)
    : log_path_(std::move(log_path)), started_(std::chrono::steady_clock::now()) {
  std::vector<std::string> words = wrapper;
  words.push_back(TRIMD_BINARY);
  words.insert(words.end(), args.begin(), args.end());
  int log = ::open(log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (log < 0) throw_errno("open " + log_path_);
  try {
    pid_ = spawn_child(words, {log, log});
  } catch (...) {
    close_fd(log);
    throw;
  }
  close_fd(log);
}

TrimdProcess::~TrimdProcess() {
  if (std::getenv("TRIMD_SYSTEST_SHOW_LOGS")) std::cerr << "---- " << log_path_ << '\n' << log();
  if (pid_ <= 0 || exit_code_) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
}

std::chrono::steady_clock::duration TrimdProcess::age() const {
  return std::chrono::steady_clock::now() - started_;
}

void TrimdProcess::send(int signal_number) const {
  if (::kill(pid_, signal_number) != 0) throw_errno("kill trimd");
}

bool TrimdProcess::running() {
  if (exit_code_) return false;
  int status = 0;
  const pid_t done = ::waitpid(pid_, &status, WNOHANG);
  if (done < 0 && errno != EINTR) throw_errno("waitpid trimd");
  if (done == pid_) exit_code_ = exit_code_of(status);
  return !exit_code_;
}

std::optional<int> TrimdProcess::wait_for_exit(std::chrono::milliseconds timeout) {
  wait_until([&] { return !running(); }, timeout);
  return exit_code_;
}

std::string TrimdProcess::raw_log() const {
  std::ifstream in(log_path_);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string TrimdProcess::log() const { return readable_log(raw_log()); }

std::vector<LogEntry> TrimdProcess::events(EventId id, const std::string& mount_point) const {
  return entries_of(raw_log(), id, mount_point);
}

std::optional<LogEntry> TrimdProcess::wait_for_event(EventId id, const std::string& mount_point,
                                                     std::chrono::milliseconds timeout,
                                                     std::size_t nth) {
  std::optional<LogEntry> entry;
  wait_until(
      [&] {
        const bool alive = running();  // before reading: an exit flushes its last lines
        auto found = events(id, mount_point);
        if (found.size() >= nth) entry = std::move(found[nth - 1]);
        return entry || !alive;
      },
      timeout, 50ms);
  return entry;
}

// ---- reading trimd's log -----------------------------------------------------------

std::vector<ChunkLine> chunk_lines(const TrimdProcess& trimd, const std::string& mount_point) {
  std::vector<ChunkLine> chunks;
  for (const auto& entry : trimd.events(EventId::ChunkStarted, mount_point))
    chunks.push_back({static_cast<unsigned>(field_u64(entry, "CHUNK")), field_u64(entry, "OFFSET"),
                      field_u64(entry, "LENGTH")});
  return chunks;
}

std::optional<PassSummary> pass_success(const TrimdProcess& trimd, const std::string& mount_point) {
  const auto ends = trimd.events(EventId::PassFinished, mount_point);
  for (auto it = ends.rbegin(); it != ends.rend(); ++it) {
    if (it->at("RESULT") != "success") continue;
    return PassSummary{field_u64(*it, "DURATION_USEC"),
                       static_cast<unsigned>(field_u64(*it, "CHUNKS")),
                       static_cast<unsigned>(field_u64(*it, "PAUSES"))};
  }
  return std::nullopt;
}

// ---- what the kernel and the state file say ------------------------------------------

DiscardCounters discard_counters(const std::string& disk_name) {
  std::ifstream diskstats("/proc/diskstats");
  for (std::string line; std::getline(diskstats, line);) {
    std::istringstream fields(line);
    std::string major, minor, name;
    fields >> major >> minor >> name;
    if (name != disk_name) continue;
    std::vector<std::uint64_t> values;  // values[0] is field 4
    for (std::uint64_t value = 0; fields >> value;) values.push_back(value);
    if (values.size() < 14) throw std::runtime_error("no discard fields in /proc/diskstats");
    return DiscardCounters{values[11], values[13]};
  }
  throw std::runtime_error(disk_name + " is not in /proc/diskstats");
}

namespace {

// Whether `record` is about `mount_point`: a name that is not UTF-8 is kept
// escaped, under its own key (docs/design.md).
bool names(const toml::table& record, const std::string& mount_point) {
  if (record["mount_point"].value<std::string>() == mount_point) return true;
  return !is_valid_utf8(mount_point) &&
         record["mount_point_escaped"].value<std::string>() == escape_bytes(mount_point);
}

// The state file's record for `mount_point`, or nothing.
std::optional<toml::table> state_record(const std::string& state_file,
                                        const std::string& mount_point) {
  const toml::table document = toml::parse_file(state_file);
  for (auto&& [id, node] : document) {
    const toml::table* record = node.as_table();
    if (record && names(*record, mount_point)) return *record;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::uint64_t> state_cursor(const std::string& state_file,
                                          const std::string& mount_point) {
  const auto record = state_record(state_file, mount_point);
  if (!record) return std::nullopt;
  if (const auto cursor = (*record)["cursor"].value<std::int64_t>())
    return static_cast<std::uint64_t>(*cursor);
  return std::nullopt;
}

namespace {

template <typename T>
std::optional<T> state_field(const std::string& state_file, const std::string& mount_point,
                             const std::string& key) {
  try {
    const auto record = state_record(state_file, mount_point);
    return record ? (*record)[key].value<T>() : std::nullopt;
  } catch (const toml::parse_error&) {
    return std::nullopt;  // not written yet (toml++ reports a missing file this way too)
  }
}

}  // namespace

std::string state_last_result(const std::string& state_file, const std::string& mount_point) {
  return state_string(state_file, mount_point, "last_result").value_or("");
}

std::optional<std::int64_t> state_integer(const std::string& state_file,
                                          const std::string& mount_point, const std::string& key) {
  return state_field<std::int64_t>(state_file, mount_point, key);
}

std::optional<std::string> state_string(const std::string& state_file,
                                        const std::string& mount_point, const std::string& key) {
  return state_field<std::string>(state_file, mount_point, key);
}

// ---- images to trim ------------------------------------------------------------------

FragmentedImage fragmented_image(Fs fs, std::uint64_t size_mib, std::size_t count,
                                 std::uint64_t bytes, const std::vector<std::string>& mkfs_args) {
  LoopImage image = LoopImage::create(size_mib);
  image.mkfs(fs, mkfs_args);
  image.mount(kNoDiscard);
  image.write_fragmented_files(count, bytes);
  const std::uint64_t deleted = image.delete_every_other();
  return FragmentedImage{std::move(image), deleted};
}

Twins fragmented_twins(Fs fs, std::uint64_t size_mib, std::size_t count, std::uint64_t bytes,
                       const std::vector<std::string>& mkfs_args) {
  FragmentedImage original = fragmented_image(fs, size_mib, count, bytes, mkfs_args);
  original.image.unmount();
  return Twins{original.image.clone_sparse(), original.image.clone_sparse(), original.deleted};
}

std::uint64_t twin_tolerance(std::uint64_t allocated) {
  return std::max<std::uint64_t>(allocated / 100, 4u << 20);
}

double seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

double mib(std::uint64_t bytes) { return static_cast<double>(bytes) / (1 << 20); }

}  // namespace trimd::test
