// [fleet] of trimd.toml: which etcd cluster caps the passes on a shared
// storage backend, and how (docs/fleet.md). Absent, trimd coordinates
// nothing and opens no socket.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "time.hpp"

namespace trimd {

// What a filesystem that needs a slot does while etcd cannot be reached.
enum class OnUnreachable {
  Local,  // after unreachable_after, trim as a lone host would (said loudly)
  Wait,   // never trim without a slot
};
const char* to_string(OnUnreachable what);  // "local", "wait"

struct FleetConfig {
  std::vector<std::string> endpoints;  // etcd client URLs: http(s)://host:port
  // TLS client settings (https endpoints), files.
  std::string ca_file;
  std::string cert_file;
  std::string key_file;
  // etcd authentication: the password is read from a file, never the policy.
  std::string user;
  std::string password_file;
  unsigned max_concurrent = 1;  // passes at a time per backend, fleet-wide
  // The share of the backend's time the fleet's discards may take (0 = no
  // budget), split evenly among the slots: each holder keeps its own chunks
  // to duty / max_concurrent (lib/policy/duty.hpp).
  double duty = 0;
  Duration lease_ttl = std::chrono::seconds{15};
  OnUnreachable on_unreachable = OnUnreachable::Local;
  Duration unreachable_after = std::chrono::minutes{2};
  // The name this host goes by in its claims and in other hosts' `trimctl
  // fleet`; empty = the host name (gethostname()).
  std::string host;
  // The backend of every filesystem not given one by a [[filesystem]] rule;
  // empty = only those rules' filesystems are coordinated.
  std::string backend;

  bool operator==(const FleetConfig&) const = default;
};

// The longest lease etcd grants usefully here; the shortest keeps a live
// host's keep-alive traffic sane.
inline constexpr Duration kMinLeaseTtl = std::chrono::seconds{5};
inline constexpr Duration kMaxLeaseTtl = std::chrono::minutes{10};
inline constexpr unsigned kMaxConcurrentLimit = 1000;

// A backend name as it goes into an etcd key: letters, digits, '-', '_',
// '.', 1 to 64 of them (it is a path element under /trimd/v1/).
bool is_valid_backend_name(std::string_view name);
// A [fleet] host name: the same letters, 1 to 253 of them (a DNS name's length).
bool is_valid_host_name(std::string_view name);

}  // namespace trimd
