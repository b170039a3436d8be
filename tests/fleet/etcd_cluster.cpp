#include "etcd_cluster.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <stdexcept>

#include "wait_until.hpp"

namespace trimd::test {

namespace {

std::string joined(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& part : parts) out += (out.empty() ? "" : ",") + part;
  return out;
}

// The endpoint that says it is the leader, from `etcdctl endpoint status -w
// json` (members that do not answer are left out of its output).
std::optional<std::string> leading_endpoint(const std::string& status_json) {
  const auto statuses = nlohmann::json::parse(status_json, nullptr, false);
  if (!statuses.is_array()) return std::nullopt;
  for (const auto& entry : statuses) {
    const auto& status = entry.value("Status", nlohmann::json::object());
    const auto self = status.value("header", nlohmann::json::object()).value("member_id", 0ULL);
    if (self != 0 && self == status.value("leader", 0ULL))
      return entry.value("Endpoint", std::string{});
  }
  return std::nullopt;
}

}  // namespace

EtcdCluster::EtcdCluster(std::size_t size) {
  for (int attempt = 1;; ++attempt) {
    try {
      start_members(size);
      break;
    } catch (const PortTaken&) {
      if (attempt == kStartAttempts) throw;
      members_.clear();
      for (const auto& entry : std::filesystem::directory_iterator(dir_.path()))
        if (entry.path().extension() == ".data") std::filesystem::remove_all(entry.path());
    }
  }
  if (!wait_for_leader(std::nullopt, std::chrono::seconds{20}))
    throw std::runtime_error("etcd cluster: no leader after 20 s (logs in " + dir_.path().string() +
                             ")");
}

// Members started so far are stopped by members_' destructor if one fails
// to start or no leader comes.
void EtcdCluster::start_members(std::size_t size) {
  std::vector<MemberPlan> plans;
  std::vector<std::string> peers;
  for (std::size_t i = 0; i < size; ++i) {
    plans.push_back(plan_member("m" + std::to_string(i + 1)));
    peers.push_back(plans.back().name + "=" + plans.back().peer_url);
  }
  for (auto& plan : plans) {
    plan.initial_cluster = joined(peers);
    members_.push_back(std::make_unique<EtcdProcess>(plan, dir_.path()));
  }
}

EtcdCluster::~EtcdCluster() = default;

std::vector<std::string> EtcdCluster::urls() const {
  std::vector<std::string> out;
  for (const auto& member : members_) out.push_back(member->url());
  return out;
}

std::optional<std::size_t> EtcdCluster::leader() const {
  const auto result =
      run_command({"etcdctl", "--endpoints=" + joined(urls()), "--dial-timeout=500ms",
                   "--command-timeout=500ms", "endpoint", "status", "-w", "json"},
                  std::chrono::seconds{10});
  const auto url = leading_endpoint(result.out);
  if (!url) return std::nullopt;
  for (std::size_t i = 0; i < members_.size(); ++i)
    if (members_[i]->url() == *url) return i;
  return std::nullopt;
}

std::optional<std::size_t> EtcdCluster::wait_for_leader(std::optional<std::size_t> other_than,
                                                        std::chrono::milliseconds limit) const {
  std::optional<std::size_t> found;
  wait_until(
      [&] {
        found = leader();
        return found && found != other_than;
      },
      limit, std::chrono::milliseconds{50});
  return found != other_than ? found : std::nullopt;
}

}  // namespace trimd::test
