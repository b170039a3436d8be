// The daemon's FleetGate (lib/engine/fleet_gate.hpp): the engine's asks go
// to the coordinator of the [fleet] in force, and the coordinator's answers
// go back to the engine, one loop turn later (an answer may make the engine
// give a claim back, which must not happen inside the coordinator's own
// walk over its claims). Without [fleet] there is no coordinator and no
// socket.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "event_loop.hpp"
#include "fleet_config.hpp"
#include "fleet_gate.hpp"
#include "fleet_report.hpp"

namespace trimd::fleet {

class Coordinator;  // fleet_coordinator.hpp

class FleetLink final : public FleetGate {
 public:
  using Answers = std::function<void(const std::vector<SlotNews>&)>;

  FleetLink(EventLoop& loop, std::string host, Answers answers);
  ~FleetLink() override;

  // The [fleet] of the policy now in force. True when there was one before:
  // every claim went with its coordinator (Manager::fleet_restarted).
  bool follow(const std::optional<FleetConfig>& config);
  // Stopping: the lease is revoked, so the slots free at once rather than a
  // TTL later; `done` runs when etcd answered or `timeout` passed.
  void leave(Duration timeout, std::function<void()> done);

  void ask(const std::string& fs_id, const std::string& backend,
           const std::string& mount_point) override;
  void give_back(const std::string& fs_id) override;

  // GetFleet: the claims of `backends`, from views at most a second old
  // (fleet_coordinator.hpp).
  void report(const std::vector<std::string>& backends, std::function<void(FleetReport)> done);

  const Coordinator* coordinator() const { return coordinator_.get(); }
  // [fleet] host, else the host name.
  const std::string& host() const {
    return config_ && !config_->host.empty() ? config_->host : host_;
  }

 private:
  void queue(SlotNews news);
  void deliver();

  EventLoop& loop_;
  std::string host_;
  Answers answers_;
  std::optional<FleetConfig> config_;
  std::unique_ptr<Coordinator> coordinator_;
  // Why [fleet] has no coordinator (an unreadable password_file): every ask
  // is answered "unreachable" with it, and on_unreachable decides.
  std::string setup_error_;
  std::vector<SlotNews> pending_;
  // GetFleet reads not yet answered: a coordinator replaced under them would
  // drop them, and the caller would wait for its D-Bus timeout.
  struct ReportInProgress;
  std::vector<std::shared_ptr<ReportInProgress>> reports_;
  Timer deliver_timer_;
  std::unique_ptr<Timer> leave_timer_;
  std::function<void()> left_;
};

// This host's name in the fleet's keys and values (gethostname()).
std::string fleet_host_name();

}  // namespace trimd::fleet
