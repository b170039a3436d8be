// trimd's figures as a Prometheus text exposition file for node_exporter's
// textfile collector: a second listener of the Manager beside the bus.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "manager.hpp"
#include "time.hpp"

namespace trimd {

// The exposition text (format 0.0.4) for these filesystems and totals.
// `fleet_waited`: Manager::fleet_slot_waited(), shown only where [fleet]
// coordinates a filesystem.
std::string render_metrics(const std::vector<FsStatus>& filesystems, const Lifetime& totals,
                           Duration fleet_waited = Duration{0});

// Replaces `file` atomically with mode 0644 (replace_file_atomically: the
// new file has no name, or an unpredictable one that is not *.prom, until
// it is in place; nothing someone else put in the directory can block it).
// Throws std::system_error.
void write_textfile(const std::filesystem::path& file, const std::string& text);

// Hears every change of the manager and rewrites the file when flushed,
// at most every `interval` (forced: at once).
class MetricsExporter final : public ManagerListener {
 public:
  MetricsExporter(std::filesystem::path file, Duration interval);
  const std::filesystem::path& file() const { return file_; }
  // Writes when something changed and the interval has passed, or `force`.
  // Logs (once per streak) and carries on when the file cannot be written.
  void flush(const Manager& manager, TimePoint now, bool force = false);

  void filesystem_added(const FsStatus&) override { dirty_ = true; }
  void filesystem_removed(const std::string&) override { dirty_ = true; }
  void filesystem_changed(const FsStatus&) override { dirty_ = true; }
  void trim_started(const std::string&) override { dirty_ = true; }
  void trim_finished(const std::string&, const PassOutcome&, std::uint64_t, Duration) override {
    dirty_ = true;
  }
  void manager_changed() override { dirty_ = true; }

 private:
  std::filesystem::path file_;
  Duration interval_;
  bool dirty_ = true;
  bool failing_ = false;
  std::optional<TimePoint> last_write_;
};

}  // namespace trimd
