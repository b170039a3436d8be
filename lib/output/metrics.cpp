// The Prometheus text file: what each metric means is in its HELP line.
#include "metrics.hpp"

#include <array>
#include <system_error>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "atomic_file.hpp"
#include "utf8.hpp"

namespace trimd {

namespace {

// Label values are UTF-8: a name that is not shows as on the bus
// (escape_bytes()); then Prometheus escapes backslash, quote and line feed.
std::string escape_label(std::string_view value) {
  std::string out;
  for (const char c : escape_bytes(value)) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

double seconds(TimePoint t) { return static_cast<double>(to_usec(t)) / 1e6; }
double seconds(Duration d) { return static_cast<double>(d.count()) / 1e6; }

// One metric family: its HELP and TYPE, then its samples.
class Family {
 public:
  Family(std::string& out, std::string_view name, std::string_view type, std::string_view help)
      : out_(out), name_(name) {
    out_ += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  }
  // `labels` already rendered ("a=\"x\",b=\"y\""), empty for none.
  template <typename Value>
  Family& sample(const std::string& labels, Value value) {
    if (labels.empty())
      out_ += fmt::format("{} {}\n", name_, value);
    else
      out_ += fmt::format("{}{{{}}} {}\n", name_, labels, value);
    return *this;
  }

 private:
  std::string& out_;
  std::string_view name_;
};

std::string fs_labels(const FsStatus& fs) {
  return fmt::format("mount_point=\"{}\",fs_type=\"{}\"", escape_label(fs.mount_point),
                     escape_label(fs.fs_type));
}

std::string with(const std::string& labels, std::string_view key, std::string_view value) {
  return fmt::format("{},{}=\"{}\"", labels, key, escape_label(value));
}

const char* limit_key(IdleLimit limit) {
  switch (limit) {
    case IdleLimit::Iops: return "iops";
    case IdleLimit::Throughput: return "throughput";
    case IdleLimit::BusyTime: return "busy_time";
    case IdleLimit::Settling: return "settling";
    case IdleLimit::Unseen: return "unseen";
  }
  return "unknown";
}

const char* result_key(PassResult result) {
  switch (result) {
    case PassResult::Success: return "success";
    case PassResult::Failed: return "failed";
    case PassResult::Cancelled: return "cancelled";
    case PassResult::Unsupported: return "unsupported";
    case PassResult::Interrupted: return "interrupted";
  }
  return "unknown";
}

void render_totals(std::string& out, const Lifetime& totals) {
  Family(out, "trimd_bytes_trimmed_total", "counter",
         "Bytes discarded by all passes trimd remembers, across restarts.")
      .sample("", totals.bytes);
  Family(out, "trimd_passes_total", "counter", "Passes ended, any result, across restarts.")
      .sample("", totals.passes);
  Family(out, "trimd_preemptions_total", "counter",
         "Chunks killed for foreground I/O, across restarts.")
      .sample("", totals.preemptions);
  Family(out, "trimd_pauses_total", "counter",
         "Times a pass stopped between chunks for foreground I/O, across restarts.")
      .sample("", totals.pauses);
  Family(out, "trimd_pass_failures_total", "counter", "Passes that failed, across restarts.")
      .sample("", totals.failures);
}

void render_lifetimes(std::string& out, const std::vector<FsStatus>& filesystems) {
  struct Counter {
    const char* name;
    const char* help;
    std::uint64_t Lifetime::*field;
  };
  static constexpr std::array<Counter, 5> kCounters{{
      {"trimd_filesystem_bytes_trimmed_total",
       "Bytes discarded on the filesystem, across restarts.", &Lifetime::bytes},
      {"trimd_filesystem_passes_total", "Passes ended on the filesystem, across restarts.",
       &Lifetime::passes},
      {"trimd_filesystem_preemptions_total",
       "Chunks on the filesystem killed for foreground I/O, across restarts.",
       &Lifetime::preemptions},
      {"trimd_filesystem_pauses_total",
       "Times a pass on the filesystem stopped for foreground I/O, across restarts.",
       &Lifetime::pauses},
      {"trimd_filesystem_pass_failures_total", "Passes on the filesystem that failed.",
       &Lifetime::failures},
  }};
  for (const auto& counter : kCounters) {
    Family family(out, counter.name, "counter", counter.help);
    for (const auto& fs : filesystems) family.sample(fs_labels(fs), fs.lifetime.*(counter.field));
  }
}

void render_last_pass(std::string& out, const std::vector<FsStatus>& filesystems) {
  Family start(out, "trimd_filesystem_last_pass_start_timestamp_seconds", "gauge",
               "When the last finished pass started.");
  for (const auto& fs : filesystems)
    if (fs.last_trim_start) start.sample(fs_labels(fs), seconds(*fs.last_trim_start));
  Family end(out, "trimd_filesystem_last_pass_end_timestamp_seconds", "gauge",
             "When the last finished pass ended.");
  for (const auto& fs : filesystems)
    if (fs.last_trim_end) end.sample(fs_labels(fs), seconds(*fs.last_trim_end));
  Family bytes(out, "trimd_filesystem_last_pass_bytes", "gauge",
               "Bytes the last finished pass discarded.");
  Family duration(out, "trimd_filesystem_last_pass_duration_seconds", "gauge",
                  "The last finished pass's wall time, split into trimming and waiting.");
  Family result(out, "trimd_filesystem_last_pass_result", "gauge",
                "1 for the result the last finished pass came to, 0 for the others.");
  for (const auto& fs : filesystems) {
    const auto& outcome = fs.last_result;
    if (!outcome) continue;
    bytes.sample(fs_labels(fs), fs.last_bytes_trimmed);
    duration.sample(with(fs_labels(fs), "phase", "trimming"), seconds(fs.last_trimming));
    duration.sample(with(fs_labels(fs), "phase", "waiting"), seconds(fs.last_waited));
    for (const auto kind : {PassResult::Success, PassResult::Failed, PassResult::Cancelled,
                            PassResult::Unsupported, PassResult::Interrupted})
      result.sample(with(fs_labels(fs), "result", result_key(kind)),
                    outcome->result == kind ? 1 : 0);
  }
}

void render_now(std::string& out, const std::vector<FsStatus>& filesystems) {
  Family state(out, "trimd_filesystem_state", "gauge",
               "1 for the filesystem's current state, 0 for the others.");
  for (const auto& fs : filesystems)
    for (const auto kind :
         {FsState::Waiting, FsState::Scheduled, FsState::Trimming, FsState::Paused,
          FsState::Unsupported, FsState::Disabled, FsState::Error})
      state.sample(with(fs_labels(fs), "state", to_string(kind)), fs.state == kind ? 1 : 0);
  Family waiting(out, "trimd_filesystem_waiting", "gauge",
                 "1 while the filesystem waits, with what for (and for busy disks, which disk "
                 "and which limit).");
  for (const auto& fs : filesystems) {
    if (fs.waiting_for == WaitingFor::Nothing) continue;
    std::string labels = with(fs_labels(fs), "reason", to_string(fs.waiting_for));
    labels = with(labels, "disk", fs.busy_disk);
    labels = with(labels, "limit", fs.busy_disk.empty() ? "" : limit_key(fs.busy_limit));
    waiting.sample(labels, 1);
  }
  Family progress(out, "trimd_filesystem_progress_ratio", "gauge",
                  "How far the current (or last) pass got, 0 to 1.");
  Family next(out, "trimd_filesystem_next_pass_timestamp_seconds", "gauge",
              "When the next pass is due (absent while one runs).");
  Family discard(out, "trimd_filesystem_inline_discard", "gauge",
                 "1 when the filesystem is mounted with inline discard.");
  Family size(out, "trimd_filesystem_size_bytes", "gauge", "Size of the filesystem's devices.");
  Family duty(out, "trimd_filesystem_duty_ratio", "gauge",
              "The duty budget its passes keep to: the share of the time they may keep the device "
              "busy with discards (0: none).");
  Family busy(out, "trimd_filesystem_discard_busy_seconds_total", "counter",
              "Device time its chunks cost, as the duty budget charges it, since trimd started.");
  for (const auto& fs : filesystems) {
    progress.sample(fs_labels(fs), fs.progress);
    if (fs.next_trim) next.sample(fs_labels(fs), seconds(*fs.next_trim));
    discard.sample(fs_labels(fs), fs.inline_discard ? 1 : 0);
    size.sample(fs_labels(fs), fs.size);
    duty.sample(fs_labels(fs), fs.duty);
    busy.sample(fs_labels(fs), seconds(fs.discard_busy));
  }
}

// Only where [fleet] coordinates a filesystem: nothing new for other hosts.
void render_fleet(std::string& out, const std::vector<FsStatus>& filesystems,
                  Duration fleet_waited) {
  const bool coordinated =
      std::any_of(filesystems.begin(), filesystems.end(),
                  [](const FsStatus& fs) { return !fs.fleet_backend.empty(); });
  if (!coordinated) return;
  Family held(out, "trimd_fleet_slot_held", "gauge",
              "1 while the filesystem holds one of its shared backend's fleet-wide slots.");
  for (const auto& fs : filesystems)
    if (!fs.fleet_backend.empty())
      held.sample(with(fs_labels(fs), "backend", fs.fleet_backend), fs.fleet_slot_held ? 1 : 0);
  Family waited(out, "trimd_fleet_slot_wait_seconds_total", "counter",
                "Time filesystems waited for fleet-wide slots since trimd started, together.");
  waited.sample("", seconds(fleet_waited));
}

}  // namespace

std::string render_metrics(const std::vector<FsStatus>& filesystems, const Lifetime& totals,
                           Duration fleet_waited) {
  std::string out;
  render_totals(out, totals);
  render_lifetimes(out, filesystems);
  render_last_pass(out, filesystems);
  render_now(out, filesystems);
  render_fleet(out, filesystems, fleet_waited);
  return out;
}

// The collector's directory is often writable by others: see atomic_file.hpp.
void write_textfile(const std::filesystem::path& file, const std::string& text) {
  replace_file_atomically(file, text, 0644);
}

MetricsExporter::MetricsExporter(std::filesystem::path file, Duration interval)
    : file_(std::move(file)), interval_(interval) {}

void MetricsExporter::flush(const Manager& manager, TimePoint now, bool force) {
  if (!dirty_ && !force) return;
  if (!force && last_write_ && now >= *last_write_ && now - *last_write_ < interval_) return;
  try {
    write_textfile(file_, render_metrics(manager.statuses(now), manager.lifetime_totals(),
                                         manager.fleet_slot_waited()));
    if (failing_) spdlog::info("{}: metrics written again", file_.string());
    failing_ = false;
  } catch (const std::system_error& e) {
    if (!failing_) spdlog::error("cannot write the metrics file: {}", e.what());
    failing_ = true;
  }
  dirty_ = false;
  last_write_ = now;
}

}  // namespace trimd
