// How `trimctl trim --wait` shows the passes it follows: a live progress
// bar per filesystem on a terminal, plain lines ("/mnt: 40%") otherwise,
// a few per pass, nothing with --json (the results come at the end).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "client.hpp"
#include "terminal.hpp"

namespace trimctl {

// A filesystem whose pass is being followed, updated from the signals.
struct TrimTarget {
  FilesystemInfo filesystem;
  bool started = false;  // TrimStarted seen, or State was 'trimming'
  bool finished = false;
  std::string result;
  uint64_t bytes = 0;
  uint64_t usec = 0;       // wall time
  uint64_t wait_usec = 0;  // of which waiting (LastWaitDuration, set before TrimFinished)
};

class TrimView {
 public:
  virtual ~TrimView() = default;
  // The targets as they are before anything happened.
  virtual void begin(const std::vector<const TrimTarget*>& targets) = 0;
  // `changed` (one of `targets`, perhaps a new one) moved on.
  virtual void show(const std::vector<const TrimTarget*>& targets, const TrimTarget& changed) = 0;
};

enum class TrimViewKind { Silent, Lines, Terminal };
// The terminal view fits the bar to terminal.columns and colours results.
std::unique_ptr<TrimView> make_trim_view(TrimViewKind kind, const Terminal& terminal);

// The plain-lines view with its output and clock handed in (for tests).
using LinePrinter = std::function<void(const std::string&)>;
using SteadyNow = std::function<std::chrono::steady_clock::time_point()>;
std::unique_ptr<TrimView> make_lines_view(LinePrinter print, SteadyNow now);

// "/mnt: success, 1.2 GiB trimmed in 12.3s"
std::string result_line(const TrimTarget& target);

}  // namespace trimctl
