// --dry-run: what trimd sees on this machine and what it would do, then exit.
#include <fmt/chrono.h>
#include <fmt/format.h>

#include <ctime>

#include "daemon.hpp"

namespace trimd {

namespace {

// --dry-run changes nothing.
class NeverRemount final : public Remounter {
 public:
  RemountOutcome set_discard(const RemountTarget&, bool) override {
    return {RemountResult::Failed, "--dry-run"};
  }
  MountInstance instance_at(const std::string& mount_point,
                            const std::vector<std::string>& super_options) override {
    return probe_mount_instance(mount_point, super_options);
  }
};

// How foreground I/O preempts a chunk there (docs/preemption.md, "Queued TRIM").
std::string queueing_note(const BlockDisk& disk) {
  if (!disk.supports_discard() || disk.discard_queueing == DiscardQueueing::Unknown) return "";
  return disk.discard_queueing == DiscardQueueing::Queued ? ", discards queued"
                                                          : ", discards not queued";
}

std::string describe_disk(const BlockDisk& disk) {
  return fmt::format("{} ({}, discard {}, {})", disk.name, format_size(disk.size_bytes),
                     disk.supports_discard()
                         ? "max " + format_size(disk.discard_max_bytes) + " granularity " +
                               format_size(disk.discard_granularity)
                         : std::string("unsupported"),
                     disk.rotational ? "rotational" : "non-rotational") +
         queueing_note(disk);
}

std::string describe_when(const FsStatus& status, TimePoint now) {
  if (status.state == FsState::Unsupported) return "not trimmed: " + status.state_reason;
  if (status.state == FsState::Disabled) return "not trimmed: " + status.state_reason;
  if (!status.next_trim) return "a pass is under way";
  const auto t = Clock::to_time_t(*status.next_trim);
  std::tm local{};
  localtime_r(&t, &local);
  const auto wait = std::chrono::duration_cast<Duration>(*status.next_trim - now);
  return fmt::format("eligible; next trim {:%Y-%m-%d %H:%M} ({})", local,
                     wait.count() <= 0 ? std::string("due now") : "in " + format_duration(wait));
}

// What trimd would do about the filesystem's online discard; empty when
// there is nothing to say.
std::string describe_takeover(const TakeoverDecision& decision) {
  const TakeoverView& view = decision.view;
  switch (decision.action) {
    case TakeoverAction::TurnOff:
      return "mounted with 'discard': would take it over (remount with nodiscard, nothing else) "
             "and trim it instead (inline_discard = \"takeover\")";
    case TakeoverAction::HandBack:
      return "taken over by trimd: would hand 'discard' back (the policy no longer says takeover)";
    case TakeoverAction::Adopt:
      return "taken over by trimd: mounted without discard, trimd trims it";
    case TakeoverAction::Forget:
    case TakeoverAction::LetGo:
    case TakeoverAction::Nothing: break;
  }
  switch (view.status) {
    case TakeoverStatus::Inline:
      return "mounted with 'discard': every delete already trims inline (inline_discard = "
             "\"takeover\" would stop that)";
    case TakeoverStatus::NotPossible:
      return "mounted with 'discard', not taken over: " + view.reason;
    default: return {};
  }
}

}  // namespace

int run_dry_run(const Config& config, const std::string& state_dir) {
  SystemView system;
  Discovery discovery = system.scan();
  const TimePoint now = Clock::now();
  // Read-only: a corrupt state file stays where it is.
  Manager manager(config, StateStore(state_dir).load(StateStore::OnCorrupt::Leave), now);
  manager.settle_clone_ids(discovery.tracked);
  std::map<std::string, DiscoveredFs> by_id;
  for (const auto& fs : discovery.tracked) by_id[fs.id] = fs;
  manager.update_filesystems(discovery.tracked, now);
  NeverRemount never;
  TakeoverController takeover(manager, never);
  const auto decisions = takeover.preview(
      discovery.tracked, parse_fstab(read_text_file("/etc/fstab").value_or("")), now);

  fmt::print("Filesystems trimd tracks:\n");
  if (discovery.tracked.empty()) fmt::print("  (none)\n");
  for (const auto& status : manager.statuses(now)) {
    const DiscoveredFs& fs = by_id.at(status.id);
    fmt::print("  {} ({}, {}, {}{})\n", status.mount_point, status.fs_type, status.device,
               format_size(status.size), status.uuid.empty() ? "" : ", UUID " + status.uuid);
    for (const auto& disk : fs.topology.disks) fmt::print("      disk {}\n", describe_disk(disk));
    if (const auto line = describe_takeover(decisions.at(status.id)); !line.empty())
      fmt::print("      {}\n", line);
    fmt::print("      {}\n", describe_when(status, now));
  }
  fmt::print("\nMounts left alone:\n");
  for (const auto& skipped : discovery.skipped)
    fmt::print("  {} ({}): {}\n", skipped.mount.mount_point, skipped.mount.fs_type, skipped.reason);
  return 0;
}

}  // namespace trimd
