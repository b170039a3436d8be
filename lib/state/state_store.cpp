// state.toml: what trimd remembers per filesystem across restarts. Written
// atomically (replace_file_atomically) so a crash leaves either the old or
// the new file, never half of one; never larger than load() reads back.
#include "state_store.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <limits>
#include <stdexcept>
#include <system_error>
#include <utility>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "atomic_file.hpp"
#include "regular_file.hpp"
#include "state_bounds.hpp"
#include "state_toml.hpp"
#include "units.hpp"
#include "utf8.hpp"

namespace trimd {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view state_file_name = "state.toml";

[[noreturn]] void throw_errno(int error, const std::string& what) {
  throw std::system_error(error, std::generic_category(), what);
}

constexpr std::string_view kFileHeader =
    "# trimd's memory of past and unfinished trim passes, one table per filesystem.\n"
    "# Times are microseconds since the epoch. Written by trimd: edit only while it is stopped.\n";

struct StateText {
  std::string text;
  std::size_t left_out = 0;  // records that did not fit the bounds
};

// The whole file, within `bounds` (records_that_fit).
StateText format_state(const StateMap& state, const StateBounds& bounds) {
  std::vector<FormattedRecord> records;
  records.reserve(state.size());
  for (const auto& [id, record] : state)
    records.push_back({id, last_sighting(record), format_record(id, record)});
  const std::size_t budget = bounds.max_bytes - std::min(bounds.max_bytes, kFileHeader.size());
  const auto keep = records_that_fit(records, budget, bounds.max_records);
  StateText out{std::string(kFileHeader)};
  for (std::size_t i = 0; i < records.size(); ++i) {
    if (keep[i])
      out.text += records[i].text;
    else
      ++out.left_out;
  }
  return out;
}

// Keeps a bad file for a person to look at, out of the way of the next save.
void set_aside(const fs::path& file, const std::string& problem) {
  auto aside = file;
  aside += fmt::format(".corrupt-{}", std::time(nullptr));
  std::error_code ec;
  fs::rename(file, aside, ec);
  if (ec)
    spdlog::warn("{}: {}; starting with an empty state (could not move it aside: {})",
                 file.string(), problem, ec.message());
  else
    spdlog::warn("{}: {}; moved it to {} and starting with an empty state", file.string(), problem,
                 aside.string());
}

// mkdir -p, new directories 0755 (less what the umask takes away).
void make_directories(const fs::path& directory) {
  fs::path partial;
  for (const auto& part : directory) {
    partial /= part;
    std::error_code ec;
    if (fs::is_directory(partial, ec)) continue;
    if (::mkdir(partial.c_str(), 0755) < 0 && errno != EEXIST)
      throw_errno(errno, "cannot create " + partial.string());
  }
}

}  // namespace

const char* to_string(TakeoverOrigin origin) {
  return origin == TakeoverOrigin::Request ? "request" : "policy";
}

std::uint64_t add_saturating(std::uint64_t a, std::uint64_t b) {
  std::uint64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum) || sum > kMaxLifetimeCount) return kMaxLifetimeCount;
  return sum;
}

Lifetime& Lifetime::operator+=(const Lifetime& other) {
  bytes = add_saturating(bytes, other.bytes);
  passes = add_saturating(passes, other.passes);
  preemptions = add_saturating(preemptions, other.preemptions);
  pauses = add_saturating(pauses, other.pauses);
  failures = add_saturating(failures, other.failures);
  return *this;
}

void add_history(FsRecord& record, PassHistoryEntry entry) {
  record.history.push_back(std::move(entry));
  if (record.history.size() > kHistoryLength)
    record.history.erase(record.history.begin(),
                         record.history.end() - static_cast<std::ptrdiff_t>(kHistoryLength));
}

std::optional<TimePoint> last_sighting(const FsRecord& record) {
  return record.last_seen ? record.last_seen : record.last_end;
}

std::size_t prune_unseen(StateMap& state, TimePoint now, Duration keep) {
  const TimePoint horizon = saturating_sub(now, keep);
  return std::erase_if(state, [horizon](const auto& entry) {
    const auto seen = last_sighting(entry.second);
    return seen && *seen < horizon;
  });
}

StateStore::StateStore(std::filesystem::path directory, StateBounds bounds)
    : directory_(std::move(directory)), file_(directory_ / state_file_name), bounds_(bounds) {}

StateMap StateStore::load(OnCorrupt on_corrupt) {
  try {
    const auto text = read_regular_file(file_.string(), kMaxStateFileBytes);
    if (!text) return {};
    return parse_state(*text, file_);
  } catch (const std::runtime_error& e) {  // FileRefused too
    if (on_corrupt == OnCorrupt::MoveAside)
      set_aside(file_, e.what());
    else
      spdlog::warn("{}: {}; ignoring it (left as it is)", file_.string(), e.what());
  }
  return {};
}

std::size_t StateStore::save(const StateMap& state) {
  const auto [text, left_out] = format_state(state, bounds_);
  make_directories(directory_);
  replace_file_atomically(file_, text, 0644);
  if (left_out > 0 && left_out != left_out_)
    spdlog::warn(
        "{}: {} of {} filesystems do not fit (at most {} and {}); left out the {} seen "
        "least recently",
        file_.string(), left_out, state.size(), bounds_.max_records, format_size(bounds_.max_bytes),
        left_out);
  left_out_ = left_out;
  return left_out;
}

}  // namespace trimd
