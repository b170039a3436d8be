#include "fleet_hosts.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>

#include "trimd_log.hpp"

namespace trimd::test {

namespace {

std::string optional_setting(const std::string& name, const std::string& value) {
  return value.empty() ? std::string{} : name + " = \"" + value + "\"\n";
}

}  // namespace

std::string fleet_host_config(const FleetPolicy& policy, const std::string& mount_point) {
  std::string endpoints;
  for (const auto& url : policy.etcd) endpoints += (endpoints.empty() ? "\"" : ", \"") + url + "\"";
  std::string toml = "[idle]\nwindow = \"1s\"\nsample_interval = \"200ms\"\n\n";
  toml += "[trim]\nfirst_delay = \"0s\"\nrandomized_delay = \"0s\"\n";
  toml += "pause = \"" + policy.pause + "\"\nchunk_size = \"" + policy.chunk_size + "\"\n";
  toml += "rate_limit = \"" + policy.rate_limit + "\"\n\n";
  toml += "[fleet]\netcd = [" + endpoints + "]\nbackend = \"" + policy.backend + "\"\n";
  toml += "max_concurrent = " + std::to_string(policy.max_concurrent) + "\n";
  toml += "lease_ttl = \"" + policy.lease_ttl + "\"\n";
  toml += optional_setting("on_unreachable", policy.on_unreachable);
  toml += optional_setting("unreachable_after", policy.unreachable_after);
  toml += "\n[[filesystem]]\nmatch = \"*\"\nenabled = false\n\n";
  toml += "[[filesystem]]\nmatch = \"" + mount_point + "\"\nenabled = true\n";
  return toml;
}

FleetHost::FleetHost(const FleetPolicy& policy, std::uint64_t size_mib)
    : fs_(fragmented_image(Fs::Ext4, size_mib, 128, 128 * 1024)) {
  fs_.image.sync();
  sandbox_.write_config(fleet_host_config(policy, mount_point()));
}

void FleetHost::start() {
  trimd_.emplace(sandbox_.args_on_bus(bus_.address()), sandbox_.log_path("trimd"));
}

// In time order: an Acquired opens a span, a Released or a Lost closes it
// (a slot held, suspended while etcd renews the lease, and held again is
// two spans, not one left open).
std::vector<HoldSpan> hold_spans(FleetHost& host) {
  std::vector<std::pair<std::uint64_t, bool>> edges;  // (when, opens)
  for (const auto& e : host.trimd().events(EventId::FleetSlotAcquired, host.mount_point()))
    edges.emplace_back(field_u64(e, "__REALTIME_TIMESTAMP"), true);
  for (const EventId end : {EventId::FleetSlotReleased, EventId::FleetSlotLost})
    for (const auto& e : host.trimd().events(end, host.mount_point()))
      edges.emplace_back(field_u64(e, "__REALTIME_TIMESTAMP"), false);
  std::sort(edges.begin(), edges.end());  // at one instant, an end before a begin
  std::vector<HoldSpan> spans;
  bool open = false;
  for (const auto& [at, opens] : edges) {
    if (opens && !open) spans.push_back({host.mount_point(), at, 0});
    if (!opens && open) spans.back().end_usec = at;
    open = opens;
  }
  return spans;
}

std::size_t most_at_once(const std::vector<HoldSpan>& spans) {
  // +1 at each begin, -1 at each end; an end before a begin at the same instant.
  std::vector<std::pair<std::uint64_t, int>> edges;
  for (const auto& span : spans) {
    edges.emplace_back(span.begin_usec, +1);
    if (span.end_usec != 0) edges.emplace_back(span.end_usec, -1);
  }
  std::sort(edges.begin(), edges.end());
  std::size_t most = 0;
  long now = 0;
  for (const auto& [at, step] : edges) {
    now += step;
    most = std::max(most, static_cast<std::size_t>(std::max(now, 0L)));
  }
  return most;
}

std::uint64_t realtime_usec_now() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                        std::chrono::system_clock::now().time_since_epoch())
                                        .count());
}

std::optional<ClaimSample> sample_claims(const std::vector<std::string>& etcd,
                                         const std::string& backend) {
  std::string endpoints;
  for (const auto& url : etcd) endpoints += (endpoints.empty() ? "" : ",") + url;
  ClaimSample sample;
  sample.begin_usec = realtime_usec_now();
  const auto result = run_command({"etcdctl", "--endpoints=" + endpoints, "--command-timeout=1s",
                                   "get", "--prefix", "/trimd/v1/" + backend + "/", "-w", "json"},
                                  std::chrono::seconds{5});
  sample.end_usec = realtime_usec_now();
  if (!result.ok()) return std::nullopt;
  const auto reply = nlohmann::json::parse(result.out, nullptr, false);
  if (reply.is_discarded()) return std::nullopt;
  sample.claims = etcd::kvs_of(reply);
  std::sort(sample.claims.begin(), sample.claims.end(),
            [](const auto& a, const auto& b) { return a.create_revision < b.create_revision; });
  return sample;
}

std::string claim_mount_point(const etcd::KeyValue& claim) {
  const auto value = nlohmann::json::parse(claim.value, nullptr, false);
  if (!value.is_object() || !value.contains("mount_point") || !value["mount_point"].is_string())
    return {};
  return value["mount_point"].get<std::string>();
}

}  // namespace trimd::test
