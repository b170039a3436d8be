#include "daemon.hpp"

#include <signal.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "bus_logind.hpp"
#include "bus_service.hpp"
#include "bus_upower.hpp"
#include "etcd_credentials.hpp"
#include "fleet_link.hpp"
#include "log_event.hpp"
#include "mountinfo.hpp"
#include "power_watch.hpp"
#include "sleep_watch.hpp"
#include "status_line.hpp"
#include "system_view.hpp"
#include "watchdog.hpp"
#include "watchers.hpp"

namespace trimd {

namespace {

// How long SIGTERM waits for killed runners to leave FITRIM (the kernel
// stops within about one discard: tens of milliseconds).
constexpr Duration kStopGrace = std::chrono::seconds{2};
// With preemption off, runners are still sampled this often: their own I/O
// is what the idleness model discounts.
constexpr Duration kOwnIoInterval = std::chrono::milliseconds{200};

Duration runner_interval(const Config& config) {
  return config.preempt_interval.count() > 0 ? config.preempt_interval : kOwnIoInterval;
}
// Progress is persisted at most this often while a pass runs.
constexpr Duration kSaveInterval = std::chrono::seconds{2};
// The metrics file is rewritten at most this often while figures move.
constexpr Duration kMetricsInterval = std::chrono::seconds{5};
// udev events come in bursts; rescan once after the burst.
constexpr Duration kRescanDelay = std::chrono::milliseconds{200};
// How long a stop waits for etcd to revoke the fleet lease; a silent etcd
// lets the slots lapse with the lease TTL instead.
constexpr Duration kLeaveGrace = std::chrono::seconds{1};

// "/mnt/x/" and "/mnt//x" name the mount point "/mnt/x" of mountinfo.
std::string normal_mount_point(const std::string& name) {
  std::string path = std::filesystem::path(name).lexically_normal().string();
  if (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

}  // namespace

Daemon::Daemon(Options options, Config config)
    : options_(std::move(options)), config_(std::move(config)), store_(options_.state_dir) {}

Daemon::~Daemon() = default;

void Daemon::setup_signals() {
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGTERM);
  sigaddset(&mask, SIGINT);
  sigaddset(&mask, SIGHUP);
  sigprocmask(SIG_BLOCK, &mask, nullptr);
  signal_fd_ = UniqueFd(signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK));
  loop_.add(signal_fd_.get(), EPOLLIN, [this](std::uint32_t) { on_signal(); });
}

void Daemon::on_signal() {
  signalfd_siginfo info;
  while (::read(signal_fd_.get(), &info, sizeof info) == sizeof info) {
    if (info.ssi_signo == SIGHUP) {
      try {
        reload();
      } catch (const ConfigError& e) {
        log_event(EventId::ReloadFailed, spdlog::level::err,
                  {{"CONFIG_FILE", e.file()},
                   {"CONFIG_LINE", std::to_string(e.line())},
                   {"CONFIG_COLUMN", std::to_string(e.column())}},
                  fmt::format("reload failed, keeping the old configuration: {}", e.what()));
      }
    } else {
      spdlog::info("{} received, stopping", info.ssi_signo == SIGTERM ? "SIGTERM" : "SIGINT");
      shut_down();
    }
  }
}

void Daemon::reload() {
  sd_notify(0, "RELOADING=1");
  Config fresh;
  try {
    fresh = load_policy(policy_sources(options_));
    etcd::check_fleet_credentials(fresh, options_.config_path);
  } catch (const ConfigError&) {
    sd_notify(0, "READY=1");  // the old config stays in force: still ready
    throw;
  }
  config_ = fresh;
  manager_->set_config(std::move(fresh), now());
  if (fleet_->follow(config_.fleet)) manager_->fleet_restarted(now());
  takeover_->policy_changed();
  rescan_timer_->arm_in(kRescanDelay);
  follow_metrics_config();
  sample_timer_->arm_every(config_.sample_interval);
  runner_->set_preempt_interval(runner_interval(config_));
  spdlog::set_level(spdlog::level::from_str(options_.log_level.value_or(config_.log_level)));
  log_event(EventId::ConfigReloaded, spdlog::level::info, {{"CONFIG_FILE", options_.config_path}},
            fmt::format("configuration reloaded from {}", options_.config_path));
  sd_notify(0, "READY=1");
  kick();
}

void Daemon::kick() {
  if (wake_timer_) wake_timer_->arm_in(Duration{1});
}

std::vector<DiscoveredFs> Daemon::scan() {
  auto found = system_.scan().tracked;
  manager_->settle_clone_ids(found);
  // `--once MOUNTPOINT...` makes one pass over those only (trimd(8)): the
  // others are not even tracked, so none is trimmed for being due.
  if (options_.once && !options_.once_mount_points.empty())
    std::erase_if(found, [this](const DiscoveredFs& fs) {
      return std::none_of(options_.once_mount_points.begin(), options_.once_mount_points.end(),
                          [&](const std::string& name) {
                            return normal_mount_point(name) == fs.mount.mount_point;
                          });
    });
  return found;
}

void Daemon::rescan() {
  const auto found = scan();
  manager_->update_filesystems(found, now());
  reconcile_takeovers(found);
  pump();
}

void Daemon::sample_diskstats() {
  manager_->observe_diskstats(system_.diskstats(), now(), runner_->take_own_io());
  pump();
}

void Daemon::chunk_ended(const ChunkReport& report) {
  if (report.end != ChunkEnd::Finished)
    manager_->chunk_discarded(report.job, report.result.bytes_discarded, report.result.device_time);
  switch (report.end) {
    case ChunkEnd::Finished:
      manager_->chunk_finished(report.job, report.result, now(), mono());
      break;
    case ChunkEnd::Preempted:
    case ChunkEnd::Died: manager_->chunk_preempted(report.job, now(), mono()); break;
    case ChunkEnd::Stopped: manager_->chunk_interrupted(report.job, now(), mono()); break;
    case ChunkEnd::TimedOut: manager_->chunk_timed_out(report.job, now(), mono()); break;
  }
  pump();
}

// A runner trims through a detached copy of its mount: umount succeeds
// mid-chunk, and the device is released once the runner is dead. So a chunk
// whose mount left the table is stopped now, not after the rescan's delay.
void Daemon::stop_chunks_of_unmounted() {
  if (runner_->running() == 0) return;
  const auto text = read_text_file("/proc/self/mountinfo");
  if (!text) return;
  std::set<int> mount_ids;
  for (const auto& mount : parse_mountinfo(*text)) mount_ids.insert(mount.mount_id);
  manager_->mounts_now(mount_ids);
  stop_requested_chunks();
}

// Pause and Cancel take effect at once: the manager names the chunks.
void Daemon::stop_requested_chunks() {
  for (std::uint64_t serial : manager_->jobs_to_stop()) runner_->stop(serial);
}

void Daemon::pump() {
  if (stopping_) return;
  if (options_.once && once_failed_) {
    quit_loop();  // a named mount point cannot be trimmed: none is
    return;
  }
  stop_requested_chunks();
  const TimePoint t = now();
  const SteadyPoint m = mono();
  for (auto& job : manager_->take_jobs(t, m)) {
    try {
      runner_->start(job);
    } catch (const std::system_error& e) {
      spdlog::error("{}: cannot start a FITRIM runner: {}", job.target.mount_point, e.what());
      manager_->chunk_preempted(job, t, m);  // retried like a preempted chunk
    }
  }
  save_state(false);
  if (metrics_) metrics_->flush(*manager_, t);
  if (sleep_) sleep_->update(t, m);
  update_status_line();
  if (options_.once && !manager_->passes_active() && runner_->running() == 0) {
    quit_loop();
    return;
  }
  wake_timer_->arm_at(manager_->next_wakeup(t, m), t);
}

void Daemon::save_state(bool force, SaveAttempt attempt) {
  if (!manager_->state_dirty()) return;
  const TimePoint t = now();
  if (!force && manager_->passes_active() && t - last_save_ < kSaveInterval) return;
  if (!force && !save_backoff_.may_try(t)) return;
  try {
    store_.save(manager_->persistent_state());
    manager_->mark_state_saved();
    last_save_ = t;
    if (save_backoff_.succeeded()) spdlog::info("state saved to {} again", store_.path().string());
  } catch (const std::exception& e) {
    const bool news = save_backoff_.failed(e.what(), t);
    spdlog::log(failed_save_level(news, attempt), "cannot save state to {}: {} (next try in {})",
                store_.path().string(), e.what(), format_duration(save_backoff_.current_delay()));
  }
}

void Daemon::follow_metrics_config() {
  const std::string& path = config_.metrics_textfile;
  if (metrics_ && metrics_->file() == path) return;
  if (metrics_) manager_->remove_listener(metrics_.get());
  metrics_.reset();
  if (path.empty()) return;
  metrics_ = std::make_unique<MetricsExporter>(path, kMetricsInterval);
  manager_->add_listener(metrics_.get());
  metrics_->flush(*manager_, now(), true);
  spdlog::info("metrics for node_exporter's textfile collector in {}", path);
}

void Daemon::update_status_line() {
  std::string line = "STATUS=" + status_line(manager_->statuses(now()), now());
  if (line == last_status_line_) return;
  last_status_line_ = line;
  sd_notify(0, line.c_str());
}

void Daemon::start_once() {
  std::vector<std::string> ids;
  for (const auto& mount_point : options_.once_mount_points) {
    auto id = manager_->id_for_mount_point(normal_mount_point(mount_point));
    if (!id) {
      spdlog::error("{}: not a filesystem trimd can trim (see trimd --dry-run)", mount_point);
      once_failed_ = true;
      continue;
    }
    ids.push_back(*id);
  }
  if (once_failed_) return;  // all named ones are checked before any is trimmed
  try {
    manager_->trim_now(ids, false, now());
  } catch (const ManagerError& e) {
    spdlog::error("{}", e.what());
    once_failed_ = true;
  }
}

int Daemon::once_exit_code() const {
  if (once_failed_) return 1;
  for (const auto& [id, outcome] : manager_->finished_passes())
    if (outcome.result != PassResult::Success) return 1;
  return 0;
}

void Daemon::shut_down() {
  if (stopping_) return;
  stopping_ = true;
  sd_notify(0, "STOPPING=1");
  manager_->stop();
  // The chunks in flight are killed, not waited for: each is redone from its
  // start, which is where the saved cursor stands.
  runner_->stop_all();
  if (!runner_->drain(kStopGrace))
    spdlog::warn("a FITRIM runner did not exit in time; its chunk will be redone after restart");
  if (!options_.once) hand_back_on_stop();
  save_state(true, SaveAttempt::Last);
  if (metrics_) metrics_->flush(*manager_, now(), true);
  quit_loop();
}

void Daemon::quit_loop() {
  // A quit before run() starts the loop is lost: asked again, it sticks.
  if (left_fleet_) return loop_.quit();
  if (quitting_) return;
  quitting_ = true;
  fleet_->leave(kLeaveGrace, [this] {
    left_fleet_ = true;
    loop_.quit();
  });
}

void DaemonControl::fleet_report(std::function<void(fleet::FleetReport)> done) {
  done(fleet::FleetReport{fleet::FleetReport::Status::NotConfigured, {}, {}, {}});
}

void Daemon::fleet_report(std::function<void(fleet::FleetReport)> done) {
  std::set<std::string> backends;
  for (const auto& status : manager_->statuses(now()))
    if (!status.fleet_backend.empty()) backends.insert(status.fleet_backend);
  fleet_->report({backends.begin(), backends.end()}, std::move(done));
}

void Daemon::fleet_answers(const std::vector<fleet::SlotNews>& news) {
  for (const auto& answer : news)
    manager_->fleet_answer(answer.fs_id, answer.kind, answer.reason, now());
  pump();
}

int Daemon::run() {
  setup_signals();
  StateMap state = store_.load();
  if (const auto dropped = prune_unseen(state, now(), config_.trim.forget_after))
    spdlog::info("forgot {} filesystems not seen for {} (forget_after)", dropped,
                 format_duration(config_.trim.forget_after));
  manager_ = std::make_unique<Manager>(config_, std::move(state), now());
  takeover_ = std::make_unique<TakeoverController>(*manager_, remounter_);
  fleet_ = std::make_unique<fleet::FleetLink>(
      loop_, fleet::fleet_host_name(),
      [this](const std::vector<fleet::SlotNews>& news) { fleet_answers(news); });
  fleet_->follow(config_.fleet);
  manager_->set_fleet_gate(fleet_.get());
  runner_ = std::make_unique<ChunkRunner>(
      loop_, [this] { return system_.diskstats(); }, runner_interval(config_),
      [this](const ChunkReport& report) { chunk_ended(report); });
  wake_timer_ = std::make_unique<Timer>(loop_, [this] { pump(); });
  sample_timer_ = std::make_unique<Timer>(loop_, [this] { sample_diskstats(); });
  rescan_timer_ = std::make_unique<Timer>(loop_, [this] { rescan(); });
  auto schedule_rescan = [this] { rescan_timer_->arm_in(kRescanDelay); };
  mount_watcher_ = std::make_unique<MountWatcher>(loop_, [this, schedule_rescan] {
    stop_chunks_of_unmounted();
    schedule_rescan();
  });
  udev_watcher_ = std::make_unique<UdevWatcher>(loop_, schedule_rescan);

  manager_->observe_diskstats(system_.diskstats(), now());
  const auto found = scan();
  manager_->update_filesystems(found, now());
  reconcile_takeovers(found);
  if (!options_.once && !options_.no_bus)
    bus_ = make_bus_service(loop_, *manager_, *this, options_);
  watch_machine();
  follow_metrics_config();
  if (options_.once) start_once();
  sample_timer_->arm_every(config_.sample_interval);
  const auto watchdog = start_watchdog(loop_);  // keep-alives while the loop runs

  const auto statuses = manager_->statuses(now());
  log_event(
      EventId::DaemonStarted, spdlog::level::info,
      {{"FILESYSTEMS", std::to_string(statuses.size())}, {"STATE_FILE", store_.path().string()}},
      fmt::format("trimd started: {} filesystem(s) tracked, state in {}", statuses.size(),
                  store_.path().string()));
  sd_notify(0, "READY=1");
  pump();
  loop_.run();
  if (!stopping_) save_state(true, SaveAttempt::Last);
  unwatch_machine();
  bus_.reset();
  if (metrics_) manager_->remove_listener(metrics_.get());
  return options_.once ? once_exit_code() : 0;
}

}  // namespace trimd
