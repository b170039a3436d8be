// Wiring: the loop, the manager, the workers, the watchers, signals, state
// saving and sd_notify. No policy lives here.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "chunk_runner.hpp"
#include "config.hpp"
#include "event_loop.hpp"
#include "fleet_report.hpp"
#include "manager.hpp"
#include "metrics.hpp"
#include "options.hpp"
#include "remounter.hpp"
#include "save_backoff.hpp"
#include "sleep_watch.hpp"
#include "state_store.hpp"
#include "system_view.hpp"
#include "takeover_controller.hpp"

namespace trimd {

namespace fleet {
class FleetLink;
struct SlotNews;
}  // namespace fleet

class MountWatcher;
class UdevWatcher;
class BusService;
class PowerWatch;
class UPower;

// What the bus layer may ask of the daemon beyond the manager.
class DaemonControl {
 public:
  virtual ~DaemonControl() = default;
  // Re-read the config file. Throws ConfigError; the old config stays.
  virtual void reload() = 0;
  // Something changed (a control call): look for work soon.
  virtual void kick() = 0;
  virtual TimePoint now() const = 0;
  // Take over / hand back inline discard of these filesystem ids (TakeOver,
  // HandBack). Throw ManagerError; by default there is nothing to do it with.
  virtual void take_over(const std::vector<std::string>& ids);
  virtual void hand_back(const std::vector<std::string>& ids);
  // GetFleet: the claims of the backends this host's filesystems use, read
  // from etcd; `done` runs later, on the loop. By default: no [fleet].
  virtual void fleet_report(std::function<void(fleet::FleetReport)> done);
};

class Daemon final : public DaemonControl, private SleepClient {
 public:
  Daemon(Options options, Config config);
  ~Daemon() override;
  // Runs until SIGTERM/SIGINT (or, with --once, until the passes end).
  // Returns the process exit code.
  int run();

  void reload() override;
  void kick() override;
  TimePoint now() const override { return Clock::now(); }
  static SteadyPoint mono() { return SteadyClock::now(); }
  void take_over(const std::vector<std::string>& ids) override;
  void hand_back(const std::vector<std::string>& ids) override;
  void fleet_report(std::function<void(fleet::FleetReport)> done) override;

 private:
  void setup_signals();
  void on_signal();
  std::vector<DiscoveredFs> scan();
  void rescan();
  void reconcile_takeovers(const std::vector<DiscoveredFs>& found);
  void hand_back_on_stop();
  void sample_diskstats();
  void pump();
  void chunk_ended(const ChunkReport& report);
  void stop_requested_chunks();
  void stop_chunks_of_unmounted();
  void save_state(bool force, SaveAttempt attempt = SaveAttempt::Periodic);
  void start_once();
  void shut_down();
  // Ends run(): after the fleet's lease is revoked (its slots free at once).
  void quit_loop();
  void fleet_answers(const std::vector<fleet::SlotNews>& news);
  void update_status_line();
  // The [metrics] textfile of the config in force: exported, or not.
  void follow_metrics_config();
  int once_exit_code() const;
  // Sleep and battery (daemon_machine.cpp): logind and UPower on the bus
  // trimd serves on, /sys/class/power_supply without UPower.
  void watch_machine();
  void unwatch_machine();
  bool lock_wanted(TimePoint now) const override;
  std::size_t stop_chunks(TimePoint now) override;
  std::size_t runners_left() const override;
  void resume(TimePoint now) override;

  Options options_;
  Config config_;
  StateStore store_;
  SystemView system_;
  FsconfigRemounter remounter_;
  EventLoop loop_;
  std::unique_ptr<Manager> manager_;
  std::unique_ptr<TakeoverController> takeover_;
  std::unique_ptr<ChunkRunner> runner_;
  std::unique_ptr<MountWatcher> mount_watcher_;
  std::unique_ptr<UdevWatcher> udev_watcher_;
  std::unique_ptr<BusService> bus_;
  std::unique_ptr<fleet::FleetLink> fleet_;   // the engine's FleetGate
  std::unique_ptr<MetricsExporter> metrics_;  // a listener of manager_ beside the bus
  std::unique_ptr<Logind> logind_;            // on bus_'s connection: gone before it
  std::unique_ptr<SleepWatch> sleep_;
  std::unique_ptr<UPower> upower_;
  std::unique_ptr<PowerWatch> power_;
  std::unique_ptr<Timer> sample_timer_;
  std::unique_ptr<Timer> wake_timer_;
  std::unique_ptr<Timer> rescan_timer_;
  UniqueFd signal_fd_;
  TimePoint last_save_{};
  SaveBackoff save_backoff_;
  std::string last_status_line_;
  bool once_failed_ = false;
  bool stopping_ = false;
  bool quitting_ = false;
  bool left_fleet_ = false;
};

// --dry-run: describe what trimd sees and would do.
int run_dry_run(const Config& config, const std::string& state_dir);

}  // namespace trimd
