#include "trim_view.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <optional>

#include "format.hpp"
#include "report.hpp"
#include "terminal_text.hpp"

namespace trimctl {

namespace {

// Why the pass does not run, "waiting (disk sdb is busy)"; nothing while
// it runs. Once started, only waiting and paused hold it: the state trimd
// moves to at the end is no news, the result that follows is.
std::optional<std::string> held_because(const TrimTarget& target) {
  const auto& fs = target.filesystem;
  const bool held = fs.state == "waiting" || fs.state == "paused";
  if (fs.state == "trimming" || (target.started && !held)) return std::nullopt;
  return fs.state_reason.empty() ? fs.state : fs.state + " (" + fs.state_reason + ")";
}

class SilentView final : public TrimView {
 public:
  void begin(const std::vector<const TrimTarget*>&) override {}
  void show(const std::vector<const TrimTarget*>&, const TrimTarget&) override {}
};

// For logs and pipes: a line when a pass changes state (starts, waits,
// pauses, ends), and while it trims every tenth of the way or, when it
// moves slowly, every ten seconds: not a line per percent.
class LinesView final : public TrimView {
 public:
  LinesView(LinePrinter print, SteadyNow now) : print_(std::move(print)), now_(std::move(now)) {}

  void begin(const std::vector<const TrimTarget*>& targets) override {
    // What was true before the request is no news: print changes only.
    for (const auto* target : targets) last_[target] = {phase(*target), line(*target), now_(), -1};
  }

  void show(const std::vector<const TrimTarget*>&, const TrimTarget& changed) override {
    Printed next{phase(changed), line(changed), now_(), tenth(changed)};
    auto& last = last_[&changed];
    if (next.text == last.text || !worth_a_line(last, next)) return;
    last = next;
    print_(last.text);
  }

 private:
  struct Printed {
    std::string phase;  // "trimming", "waiting", "paused", "finished"...
    std::string text;
    std::chrono::steady_clock::time_point at;
    int tenth = -1;  // of the progress, while trimming
  };

  static bool worth_a_line(const Printed& last, const Printed& next) {
    if (next.phase != last.phase) return true;
    if (next.tenth > last.tenth) return true;
    return next.at - last.at >= kQuietPeriod;
  }

  static std::string phase(const TrimTarget& target) {
    if (target.finished) return "finished";
    const auto held = held_because(target);
    return held ? target.filesystem.state : "trimming";
  }

  static int tenth(const TrimTarget& target) {
    if (target.finished || held_because(target)) return -1;
    return static_cast<int>(std::clamp(target.filesystem.progress, 0.0, 1.0) * 10.0 + 1e-9);
  }

  static std::string line(const TrimTarget& target) {
    if (target.finished) return result_line(target);
    const auto held = held_because(target);
    return target.filesystem.mount_point + ": " +
           (held ? *held : format_percent(target.filesystem.progress));
  }

  static constexpr auto kQuietPeriod = std::chrono::seconds(10);
  LinePrinter print_;
  SteadyNow now_;
  std::map<const TrimTarget*, Printed> last_;
};

// The block of lines is redrawn in place on every change.
class TerminalView final : public TrimView {
 public:
  explicit TerminalView(const Terminal& terminal) : terminal_(terminal) {}

  void begin(const std::vector<const TrimTarget*>& targets) override { draw(targets); }
  void show(const std::vector<const TrimTarget*>& targets, const TrimTarget&) override {
    draw(targets);
  }

 private:
  void draw(const std::vector<const TrimTarget*>& targets) {
    std::size_t mount_width = 0;
    for (const auto* target : targets)
      mount_width = std::max(mount_width, display_width(shown_mount_point(*target)));
    const std::size_t columns = terminal_.columns > 0 ? terminal_.columns : 80;
    const std::size_t bar_width = std::clamp<std::size_t>(
        columns > mount_width + 30 ? columns - mount_width - 30 : 0, 10, 50);

    // Rows, not lines, are what the cursor moves over: a result longer than
    // the terminal wraps. Progress lines are cut to fit, so they never do.
    std::string block;
    std::size_t rows = 0;
    for (const auto* target : targets) {
      Line next = line(*target, mount_width, bar_width);
      next.text = terminal_text(next.text);  // before it is measured
      if (!target->finished) next.text = ellipsize_end(next.text, columns - 1);
      rows += std::max<std::size_t>(1, (display_width(next.text) + columns - 1) / columns);
      block += paint(next.text, next.color, terminal_.colors) + "\n";
    }
    if (block == last_block_) return;  // e.g. a property the lines do not show
    std::string out;
    if (drawn_ > 0) out += "\x1b[" + std::to_string(drawn_) + "A";  // back to the first row
    out += "\r\x1b[J";  // and clear everything drawn before
    std::fputs((out + block).c_str(), stdout);
    std::fflush(stdout);
    drawn_ = rows;
    last_block_ = std::move(block);
  }

  struct Line {
    std::string text;
    Color color = Color::None;
  };

  // The mount point as the line shows it, so that the bars line up.
  static std::string shown_mount_point(const TrimTarget& target) {
    return terminal_text(target.filesystem.mount_point);
  }

  static Line line(const TrimTarget& target, std::size_t mount_width, std::size_t bar_width) {
    if (target.finished)
      return {result_line(target), is_success(target.result) ? Color::Green : Color::Red};
    const auto& fs = target.filesystem;
    const std::string mount_point = shown_mount_point(target);
    std::string text = mount_point + std::string(mount_width - display_width(mount_point), ' ') +
                       "  " + progress_bar(fs.progress, bar_width) + " ";
    const std::string percent = format_percent(fs.progress);
    text += std::string(4 - std::min<std::size_t>(4, percent.size()), ' ') + percent;
    if (const auto held = held_because(target))
      text += "  " + *held;
    else if (fs.waiting_for == "pacing")  // the duty budget: when the next chunk comes
      text += "  " + fs.state_reason;
    return {text};
  }

  Terminal terminal_;
  std::size_t drawn_ = 0;
  std::string last_block_;
};

}  // namespace

std::unique_ptr<TrimView> make_trim_view(TrimViewKind kind, const Terminal& terminal) {
  switch (kind) {
    case TrimViewKind::Lines:
      return make_lines_view(
          [](const std::string& line) {
            std::fputs(text_line(line).c_str(), stdout);
            std::fflush(stdout);  // a log reader wants each line as it happens
          },
          [] { return std::chrono::steady_clock::now(); });
    case TrimViewKind::Terminal: return std::make_unique<TerminalView>(terminal);
    case TrimViewKind::Silent: break;
  }
  return std::make_unique<SilentView>();
}

std::unique_ptr<TrimView> make_lines_view(LinePrinter print, SteadyNow now) {
  return std::make_unique<LinesView>(std::move(print), std::move(now));
}

std::string result_line(const TrimTarget& target) {
  return target.filesystem.mount_point + ": " +
         trim_result_text(target.result, target.bytes, target.usec, target.wait_usec);
}

}  // namespace trimctl
