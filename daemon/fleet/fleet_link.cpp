#include "fleet_link.hpp"

#include <unistd.h>

#include <spdlog/spdlog.h>

#include "fleet_coordinator.hpp"

namespace trimd::fleet {

// A GetFleet waiting for the coordinator: answered once, by the
// coordinator or, if it is replaced first, by follow().
struct FleetLink::ReportInProgress {
  std::function<void(FleetReport)> done;
  void finish(FleetReport answer) {
    if (done) std::exchange(done, {})(std::move(answer));
  }
};

FleetLink::FleetLink(EventLoop& loop, std::string host, Answers answers)
    : loop_(loop), host_(std::move(host)), answers_(std::move(answers)),
      deliver_timer_(loop, [this] { deliver(); }) {}

FleetLink::~FleetLink() = default;

bool FleetLink::follow(const std::optional<FleetConfig>& config) {
  if (config == config_) return false;
  const bool had = config_.has_value();
  for (auto& gathering : std::exchange(reports_, {}))
    gathering->finish(FleetReport{FleetReport::Status::Unreachable,
                                  "the [fleet] configuration changed during the read; ask again",
                                  {},
                                  {}});
  coordinator_.reset();
  pending_.clear();
  setup_error_.clear();
  config_ = config;
  if (!config_) return had;
  try {
    coordinator_ = std::make_unique<Coordinator>(loop_, *config_, host(),
                                                 [this](const SlotNews& news) { queue(news); });
  } catch (const std::exception& e) {
    setup_error_ = e.what();
    spdlog::error(
        "fleet: cannot talk to etcd: {}; filesystems with a backend wait as for an unreachable "
        "etcd (on_unreachable = \"{}\")",
        setup_error_, to_string(config_->on_unreachable));
    return had;
  }
  spdlog::info("fleet: capping passes at {} per backend through etcd at {} (as host {})",
               config_->max_concurrent, fmt::join(config_->endpoints, ", "), host());
  return had;
}

void FleetLink::queue(SlotNews news) {
  pending_.push_back(std::move(news));
  deliver_timer_.arm_in(Duration{1});
}

void FleetLink::deliver() {
  std::vector<SlotNews> news;
  news.swap(pending_);
  if (!news.empty()) answers_(news);
}

void FleetLink::ask(const std::string& fs_id, const std::string& backend,
                    const std::string& mount_point) {
  if (coordinator_)
    coordinator_->request(fs_id, backend, mount_point);
  else if (!setup_error_.empty())
    queue(SlotNews{fs_id, SlotAnswer::Unreachable, setup_error_});
}

void FleetLink::give_back(const std::string& fs_id) {
  if (coordinator_) coordinator_->release(fs_id);
}

void FleetLink::leave(Duration timeout, std::function<void()> done) {
  if (!coordinator_) return done();
  left_ = std::move(done);
  leave_timer_ = std::make_unique<Timer>(loop_, [this] {
    if (left_) std::exchange(left_, {})();
  });
  leave_timer_->arm_in(timeout);
  coordinator_->revoke([this] {
    if (left_) std::exchange(left_, {})();
  });
}

// GetFleet: answered from the coordinator's views (one read serves every
// caller); a coordinator replaced under a waiting caller answers it here.
void FleetLink::report(const std::vector<std::string>& backends,
                       std::function<void(FleetReport)> done) {
  if (!setup_error_.empty())
    return done(FleetReport{FleetReport::Status::Unreachable, setup_error_, {}, {}});
  if (!coordinator_) return done(FleetReport{FleetReport::Status::NotConfigured, {}, {}, {}});
  if (backends.empty()) return done(FleetReport{});
  auto gathering = std::make_shared<ReportInProgress>();
  gathering->done = std::move(done);
  std::erase_if(reports_, [](const auto& report) { return !report->done; });
  reports_.push_back(gathering);
  coordinator_->report(backends,
                       [gathering](FleetReport report) { gathering->finish(std::move(report)); });
}

std::string fleet_host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

}  // namespace trimd::fleet
