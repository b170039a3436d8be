#include "fleet_link.hpp"

#include <unistd.h>

#include <spdlog/spdlog.h>

namespace trimd::fleet {

FleetLink::FleetLink(EventLoop& loop, std::string host, Answers answers)
    : loop_(loop), host_(std::move(host)), answers_(std::move(answers)),
      deliver_timer_(loop, [this] { deliver(); }) {}

FleetLink::~FleetLink() = default;

bool FleetLink::follow(const std::optional<FleetConfig>& config) {
  if (config == config_) return false;
  const bool had = coordinator_ != nullptr;
  coordinator_.reset();
  pending_.clear();
  config_ = config;
  if (config_) {
    coordinator_ =
        std::make_unique<Coordinator>(loop_, *config_, host_, [this](const SlotNews& news) {
          pending_.push_back(news);
          deliver_timer_.arm_in(Duration{1});
        });
    spdlog::info("fleet: capping passes at {} per backend through etcd at {} (as host {})",
                 config_->max_concurrent, fmt::join(config_->endpoints, ", "), host_);
  }
  return had;
}

void FleetLink::deliver() {
  std::vector<SlotNews> news;
  news.swap(pending_);
  if (!news.empty()) answers_(news);
}

void FleetLink::ask(const std::string& fs_id, const std::string& backend,
                    const std::string& mount_point) {
  if (coordinator_) coordinator_->request(fs_id, backend, mount_point);
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

std::string fleet_host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

}  // namespace trimd::fleet
