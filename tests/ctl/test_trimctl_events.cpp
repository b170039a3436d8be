// trimctl trim --wait and trimctl monitor: following trimd's signals.
#include <signal.h>

#include <cctype>

#include "trimctl_fixture.hpp"

using namespace trimctl_test;
using namespace std::chrono_literals;

namespace {

class TrimctlTrimWait : public TrimctlTest {};
class TrimctlMonitor : public TrimctlTest {};

// Where `needle` first appears in `text`, npos when it does not.
std::size_t position(const std::string& text, const std::string& needle) {
  return text.find(needle);
}

// "<mount>  [=====>     ]  50%" somewhere in the terminal output.
bool shows_half_done_bar(const std::string& out, const std::string& mount_point) {
  const std::string start = mount_point + "  [";
  for (auto at = out.find(start); at != std::string::npos; at = out.find(start, at + 1)) {
    const std::size_t bar = at + start.size();
    const std::size_t head = out.find_first_not_of('=', bar);
    const std::size_t end = out.find_first_not_of(' ', head + 1);
    if (head > bar && out[head] == '>' && end != std::string::npos && end > head + 1 &&
        out.compare(end, 6, "]  50%") == 0)
      return true;
  }
  return false;
}

// "2026-12-01 09:00:00.123 " at the start of a monitor line, then `rest`.
bool is_event_line(const std::string& line, const std::string& rest) {
  const std::string stamp = "9999-99-99 99:99:99.999 ";
  return has_shape_at(line, 0, stamp) && line.substr(stamp.size()) == rest;
}

TEST_F(TrimctlTrimWait, PrintsProgressLinesThenTheResultEvenWhenThePassIsOverBeforeTheReply) {
  // Immediate pacing: every signal goes out before TrimNow returns, so only
  // a client that subscribed before calling sees any of them.
  const auto result = trimctl({"trim", "--wait", "/mnt/fast"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(lines_of(result.out),
            (std::vector<std::string>{"/mnt/fast: 0%", "/mnt/fast: 50%", "/mnt/fast: 100%",
                                      "/mnt/fast: success, 1.2 GiB trimmed in 12.3s"}));
}

TEST_F(TrimctlTrimWait, PrintsALineEveryTenthOfThePassNotEveryPercentInAPipe) {
  start_fake(Pacing::Percent);
  const auto result = trimctl({"trim", "--wait", "/mnt/fast"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  std::vector<std::string> expected;
  for (int percent = 0; percent <= 100; percent += 10)
    expected.push_back("/mnt/fast: " + std::to_string(percent) + "%");
  expected.push_back("/mnt/fast: success, 1.2 GiB trimmed in 12.3s");
  EXPECT_EQ(lines_of(result.out), expected);
}

TEST_F(TrimctlTrimWait, ExitsOneWhenAPassFails) {
  const auto result = trimctl({"trim", "--wait", "/data"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(line_with(result.out, "trimmed"),
            "/data: failed: Input/output error, 0 B trimmed in 1.0s")
      << result.out;
}

TEST_F(TrimctlTrimWait, FollowsEveryEligibleFilesystemWhenNoneIsNamed) {
  auto filesystems = sample_filesystems();
  FakeFilesystem unsupported = filesystems[0];
  unsupported.id = "vfat";
  unsupported.mount_point = "/boot/efi";
  unsupported.state = "unsupported";
  filesystems.push_back(unsupported);
  filesystems[1].next_result = "success";  // /data succeeds this time
  start_fake(Pacing::Paced, filesystems);

  const auto result = trimctl({"trim", "--wait"});
  ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
  EXPECT_NE(position(result.out, "/mnt/fast: success"), std::string::npos) << result.out;
  EXPECT_NE(position(result.out, "/data: success, 0 B trimmed in 1.0s"), std::string::npos)
      << result.out;
  EXPECT_LT(position(result.out, "/data: 50%"), position(result.out, "/data: success"));
  EXPECT_EQ(position(result.out, "/boot/efi"), std::string::npos) << result.out;
}

TEST_F(TrimctlTrimWait, PrintsTheResultsAsJson) {
  const auto result = trimctl({"trim", "--wait", "--json", "/mnt/fast", "/data"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(python_json(result.out, "[r['result'] for r in doc['results']]"),
            "['success', 'failed: Input/output error']");
  EXPECT_EQ(python_json(result.out, "doc['results'][0]['bytes_trimmed']"),
            std::to_string(kFastNextBytes));
  EXPECT_EQ(python_json(result.out, "doc['results'][0]['usec']"), std::to_string(kFastNextUsec));
}

TEST_F(TrimctlTrimWait, RedrawsAProgressBarPerFilesystemInPlaceOnATerminal) {
  start_fake(Pacing::Paced);
  ChildOptions options = trimctl_options();
  options.terminal = true;
  ChildProcess child(trimctl_argv({"trim", "--wait", "/mnt/fast", "/data"}), options);
  const auto result = child.finish(30s);
  EXPECT_EQ(result.exit_code, 1);  // /data fails
  EXPECT_NE(result.out.find("\x1b[2A"), std::string::npos) << "no cursor-up redraw";
  EXPECT_TRUE(shows_half_done_bar(result.out, "/mnt/fast")) << result.out;
  EXPECT_NE(result.out.find("/mnt/fast: success, 1.2 GiB trimmed in 12.3s"), std::string::npos);
  EXPECT_NE(result.out.find("/data: failed: Input/output error"), std::string::npos);
}

// The terminal output without escape sequences and carriage returns.
std::string plain_text(const std::string& out) {
  std::string text;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i] == '\x1b' && i + 1 < out.size() && out[i + 1] == '[') {
      i += 2;
      while (i < out.size() && !std::isalpha(static_cast<unsigned char>(out[i]))) ++i;
    } else if (out[i] != '\r') {
      text += out[i];
    }
  }
  return text;
}

TEST_F(TrimctlTrimWait, CutsProgressLinesToTheTerminalWidthSoRedrawsDoNotWrap) {
  start_fake(Pacing::Paced);
  ChildOptions options = trimctl_options();
  options.terminal = true;
  options.environment["COLUMNS"] = "50";
  ChildProcess child(trimctl_argv({"trim", "--wait", "/mnt/fast", "/data"}), options);
  const auto result = child.finish(30s);
  EXPECT_EQ(result.exit_code, 1);  // /data fails
  bool cut = false;
  for (const auto& line : lines_of(plain_text(result.out))) {
    if (line.find("  [") == std::string::npos) continue;  // not a progress line
    std::size_t cells = 0;
    for (const char c : line) cells += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    EXPECT_LT(cells, 50u) << line;
    cut = cut || line.find("…") != std::string::npos;
  }
  EXPECT_TRUE(cut) << "the waiting reason should not fit: " << plain_text(result.out);
}

TEST_F(TrimctlTrimWait, ExitsThreeWhenTrimdLeavesTheBusMidPass) {
  start_fake(Pacing::Stalled);
  ChildProcess child(trimctl_argv({"trim", "--wait", "/mnt/fast"}), trimctl_options());
  ASSERT_TRUE(child.wait_for_output("/mnt/fast: 50%", 10s)) << child.output();
  fake_.reset();
  const auto result = child.finish(10s);
  EXPECT_EQ(result.exit_code, 3);
  EXPECT_NE(result.err.find("trimd left the bus before the passes finished"), std::string::npos)
      << result.err;
}

TEST_F(TrimctlTrimWait, StopsWaitingOnSigintAndSaysThePassGoesOn) {
  start_fake(Pacing::Stalled);
  ChildProcess child(trimctl_argv({"trim", "--wait", "/mnt/fast"}), trimctl_options());
  ASSERT_TRUE(child.wait_for_output("/mnt/fast: 50%", 10s)) << child.output();
  child.send_signal(SIGINT);
  const auto result = child.finish(10s);
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find("stopped waiting; the passes go on in trimd"), std::string::npos)
      << result.err;
}

TEST_F(TrimctlMonitor, PrintsEachEventWithATimestampUntilSigint) {
  const uint64_t reads_before = fake_->property_reads();
  ChildProcess child(trimctl_argv({"monitor"}), trimctl_options());
  // Once it has read the state it listens: what follows must all show.
  ASSERT_TRUE(wait_for_reads(reads_before, 10s));
  fake_->set_progress("/mnt/fast", 0.25);
  FakeFilesystem added = fast_filesystem(realtime_usec());
  added.id = "new";
  added.mount_point = "/srv/new";
  added.device = "/dev/sdc1";
  fake_->add_filesystem(added);
  fake_->remove_filesystem("/data");
  ASSERT_TRUE(child.wait_for_output("InterfacesRemoved", 10s)) << child.output();
  child.send_signal(SIGINT);
  const auto result = child.finish(10s);

  EXPECT_EQ(result.exit_code, 0) << result.err;
  const auto lines = lines_of(result.out);
  ASSERT_EQ(lines.size(), 3u) << result.out;
  EXPECT_TRUE(is_event_line(lines[0], "/mnt/fast: PropertiesChanged Progress=25%")) << lines[0];
  EXPECT_TRUE(is_event_line(lines[1], "/srv/new: InterfacesAdded ext4 on /dev/sdc1")) << lines[1];
  EXPECT_TRUE(is_event_line(lines[2], "/data: InterfacesRemoved")) << lines[2];
}

TEST_F(TrimctlMonitor, PrintsJsonLinesOfAWholePassAndExitsZeroOnSigterm) {
  start_fake(Pacing::Paced);
  const uint64_t reads_before = fake_->property_reads();
  ChildProcess child(trimctl_argv({"monitor", "--json"}), trimctl_options());
  ASSERT_TRUE(wait_for_reads(reads_before, 10s));
  ASSERT_EQ(trimctl({"trim", "/mnt/fast"}).exit_code, 0);
  ASSERT_TRUE(child.wait_for_output("TrimFinished", 10s)) << child.output();
  child.send_signal(SIGTERM);
  const auto result = child.finish(10s);

  EXPECT_EQ(result.exit_code, 0) << result.err;
  const std::string events = python_json(result.out, "[d['event'] for d in docs]");
  EXPECT_EQ(events.find("['PropertiesChanged', 'TrimStarted'"), 0u) << events;
  EXPECT_NE(events.rfind("'TrimFinished']"), std::string::npos) << events;
  EXPECT_EQ(python_json(result.out,
                        "[d['changed']['Progress'] for d in docs "
                        "if d['event'] == 'PropertiesChanged' and 'Progress' in d['changed']]"),
            "[0, 0.5, 1]");
  EXPECT_EQ(python_json(result.out, "[d['bytes'] for d in docs if d['event'] == 'TrimFinished']"),
            "[" + std::to_string(kFastNextBytes) + "]");
}

}  // namespace
