// trimctl trim [MOUNT...] [--ignore-idle] [--wait]
#include <algorithm>
#include <cstdio>

#include "commands.hpp"
#include "format.hpp"
#include "json.hpp"
#include "report.hpp"
#include "trim_view.hpp"

namespace trimctl {

namespace {

// States in which trimd will not start a pass, so waiting would be forever.
bool can_trim(const FilesystemInfo& fs) {
  return fs.state != "unsupported" && fs.state != "disabled";
}

// Follows the passes of the chosen filesystems from trimd's signals.
class TrimWatcher final : public EventSink {
 public:
  explicit TrimWatcher(TrimView& view) : view_(view) {}

  // Follows the named filesystems, or every one trimd can trim when none
  // is named. Returns the named mount points it does not know.
  std::vector<std::string> follow(const std::vector<FilesystemInfo>& known,
                                  const std::vector<std::string>& named) {
    for (const auto& fs : known) known_[fs.object_path] = fs;
    following_all_ = named.empty();
    std::vector<std::string> unknown;
    for (const auto& mount_point : named) {
      const auto it = std::find_if(known.begin(), known.end(),
                                   [&](const auto& fs) { return fs.mount_point == mount_point; });
      if (it == known.end())
        unknown.push_back(mount_point);
      else
        add(*it);
    }
    if (following_all_)
      for (const auto& fs : known)
        if (can_trim(fs)) add(fs);
    return unknown;
  }

  void begin() { view_.begin(order_); }

  bool done() const {
    return daemon_left_ || std::all_of(order_.begin(), order_.end(),
                                       [](const auto* target) { return target->finished; });
  }
  bool daemon_left() const { return daemon_left_; }
  const std::vector<const TrimTarget*>& targets() const { return order_; }

  void on_trim_started(const std::string& object) override {
    TrimTarget* target = find(object);
    // With no names, a pass trimd starts on a filesystem we skipped counts too.
    if (!target && following_all_ && known_.count(object)) target = &add(known_[object]);
    if (!target || target->finished) return;
    target->started = true;
    target->filesystem.state = "trimming";
    target->filesystem.progress = 0;
    view_.show(order_, *target);
  }

  void on_trim_finished(const std::string& object, const std::string& result, uint64_t bytes,
                        uint64_t usec) override {
    TrimTarget* target = find(object);
    if (!target || target->finished) return;
    target->finished = true;
    target->result = result;
    target->bytes = bytes;
    target->usec = usec;
    // trimd sets LastWaitDuration before it sends TrimFinished.
    target->wait_usec = target->filesystem.last_wait_duration;
    view_.show(order_, *target);
  }

  void on_properties_changed(const std::string& object, const std::string& interface,
                             const PropertyMap& changed) override {
    if (interface != kFilesystemInterface) return;
    if (known_.count(object)) apply_properties(known_[object], changed);
    TrimTarget* target = find(object);
    if (!target || target->finished) return;
    apply_properties(target->filesystem, changed);
    if (target->filesystem.state == "trimming") target->started = true;
    view_.show(order_, *target);
  }

  void on_filesystem_added(const FilesystemInfo& fs) override { known_[fs.object_path] = fs; }

  void on_filesystem_removed(const std::string& object) override {
    TrimTarget* target = find(object);
    if (!target || target->finished) return;
    target->finished = true;
    target->result = "gone: trimd no longer tracks it";
    view_.show(order_, *target);
  }

  void on_daemon_presence(bool present) override {
    if (!present) daemon_left_ = true;
  }

 private:
  TrimTarget* find(const std::string& object) {
    const auto it = targets_.find(object);
    return it == targets_.end() ? nullptr : &it->second;
  }

  TrimTarget& add(const FilesystemInfo& fs) {
    auto [it, inserted] = targets_.try_emplace(fs.object_path);
    if (inserted) {
      it->second.filesystem = fs;
      // The progress of an earlier pass is not this one's.
      if (!pass_under_way(fs)) it->second.filesystem.progress = 0;
      order_.push_back(&it->second);
    }
    return it->second;
  }

  TrimView& view_;
  std::map<std::string, TrimTarget> targets_;  // by object path; nodes stay put
  std::vector<const TrimTarget*> order_;
  std::map<std::string, FilesystemInfo> known_;
  bool following_all_ = false;
  bool daemon_left_ = false;
};

TrimViewKind view_kind(const Options& options) {
  if (options.json_output() || options.quiet) return TrimViewKind::Silent;
  return options.terminal.tty ? TrimViewKind::Terminal : TrimViewKind::Lines;
}

void print_results_json(const std::vector<const TrimTarget*>& targets, JsonMode mode) {
  Json results = Json::array();
  for (const auto* target : targets)
    results.push_back({{"object", target->filesystem.object_path},
                       {"mount_point", target->filesystem.mount_point},
                       {"result", target->result},
                       {"bytes_trimmed", target->bytes},
                       {"usec", target->usec},
                       {"wait_usec", target->wait_usec}});
  std::printf("%s\n", json_text(Json{{"results", results}}, mode).c_str());
}

bool all_succeeded(const std::vector<const TrimTarget*>& targets) {
  return std::all_of(targets.begin(), targets.end(),
                     [](const auto* target) { return is_success(target->result); });
}

// Requests the passes and follows them to their end.
int trim_and_wait(Client& client, const Options& options,
                  const std::vector<std::string>& mount_points) {
  auto view = make_trim_view(view_kind(options), options.terminal);
  TrimWatcher watcher(*view);
  // Listen first: a pass that ends right away must not end unseen.
  client.subscribe(watcher);
  const auto known = client.filesystems();
  client.trim_now(mount_points, options.ignore_idle);

  auto unknown = watcher.follow(known, mount_points);
  if (!unknown.empty()) unknown = watcher.follow(client.filesystems(), unknown);
  if (!unknown.empty())
    throw Failure("trimd accepted " + unknown.front() +
                  " but does not list it; see 'trimctl status'");
  if (watcher.targets().empty()) {
    if (!options.quiet)
      std::fprintf(stderr, "trimctl: no filesystem trimd can trim; see 'trimctl status'\n");
    return kExitOk;
  }

  watcher.begin();
  if (!client.dispatch_until([&] { return watcher.done(); })) {
    std::fprintf(
        stderr,
        "trimctl: stopped waiting; the passes go on in trimd ('trimctl cancel' stops them)\n");
    return kExitFailed;
  }
  if (watcher.daemon_left())
    throw Unreachable("trimd left the bus before the passes finished (see 'journalctl -u trimd')");
  if (options.json_output() && !options.quiet) print_results_json(watcher.targets(), options.json);
  return all_succeeded(watcher.targets()) ? kExitOk : kExitFailed;
}

}  // namespace

int trim_command(Client& client, const Options& options) {
  const auto mount_points = absolute_mount_points(options.arguments);
  if (options.wait) return trim_and_wait(client, options, mount_points);
  client.trim_now(mount_points, options.ignore_idle);
  return kExitOk;
}

}  // namespace trimctl
