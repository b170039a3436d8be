// [fleet] of trimd.toml, read with the same typed, located errors as the
// rest of the policy.
#include "fleet_config.hpp"

#include <algorithm>
#include <cctype>

#include "config_reader.hpp"

namespace trimd {

const char* to_string(OnUnreachable what) {
  switch (what) {
    case OnUnreachable::Local: return "local";
    case OnUnreachable::Wait: return "wait";
  }
  return "local";
}

namespace {

bool is_valid_name(std::string_view name, std::size_t longest) {
  const auto allowed = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  };
  return !name.empty() && name.size() <= longest && name != "." && name != ".." &&
         std::all_of(name.begin(), name.end(), allowed);
}

}  // namespace

bool is_valid_backend_name(std::string_view name) { return is_valid_name(name, 64); }

bool is_valid_host_name(std::string_view name) { return is_valid_name(name, 253); }

namespace config_detail {

namespace {

constexpr DurationRange kLeaseRange{kMinLeaseTtl, kMaxLeaseTtl, "5s", "10min"};
constexpr DurationRange kUnreachableRange{std::chrono::seconds{0}, std::chrono::hours{24}, "0",
                                          "1d"};

std::string endpoint(const Reader& r, const std::string& name, const toml::node& value) {
  std::string url = r.string(name, value);
  if (!url.starts_with("http://") && !url.starts_with("https://"))
    r.fail(value.source(), fmt::format("{}: \"{}\" is not an etcd client URL (http://host:port or "
                                       "https://host:port)",
                                       name, url));
  while (url.ends_with('/')) url.pop_back();
  return url;
}

std::vector<std::string> endpoints(const Reader& r, const std::string& name,
                                   const toml::node& value) {
  const auto* array = value.as_array();
  if (!array) r.fail_type(name, value, "an array of etcd client URLs");
  std::vector<std::string> out;
  for (const auto& element : *array) out.push_back(endpoint(r, name, element));
  if (out.empty()) r.fail(value.source(), fmt::format("{}: names no etcd endpoint", name));
  return out;
}

std::string absolute_file(const Reader& r, const std::string& name, const toml::node& value) {
  std::string path = r.string(name, value);
  if (path.empty() || path.front() != '/')
    r.fail(value.source(), fmt::format("{}: \"{}\" is not an absolute path", name, path));
  return path;
}

unsigned max_concurrent(const Reader& r, const std::string& name, const toml::node& value) {
  const auto* i = value.as_integer();
  if (!i) r.fail_type(name, value, "a whole number of passes");
  if (i->get() < 1 || i->get() > kMaxConcurrentLimit)
    r.fail(value.source(),
           fmt::format("{}: {} is not between 1 and {}", name, i->get(), kMaxConcurrentLimit));
  return static_cast<unsigned>(i->get());
}

OnUnreachable on_unreachable(const Reader& r, const std::string& name, const toml::node& value) {
  const std::string text = r.string(name, value);
  for (const auto what : {OnUnreachable::Local, OnUnreachable::Wait})
    if (text == to_string(what)) return what;
  r.fail(value.source(),
         fmt::format("{}: \"{}\" is not a choice (use \"local\" or \"wait\")", name, text));
}

// TLS needs a client certificate and its key together; either alone is a
// half-made setting that would fail only at the first connection.
void check_tls(const Reader& r, const toml::table& table, const FleetConfig& fleet) {
  if (fleet.cert_file.empty() != fleet.key_file.empty())
    r.fail(table.source(), "fleet: cert and key go together (a client certificate and its key)");
  if (!fleet.user.empty() && fleet.password_file.empty())
    r.fail(table.source(), "fleet: user needs password_file (the password is never in the policy)");
}

}  // namespace

std::string read_backend(const Reader& r, const std::string& name, const toml::node& value) {
  std::string backend = r.string(name, value);
  if (!is_valid_backend_name(backend))
    r.fail(value.source(), fmt::format("{}: \"{}\" is not a backend name (1 to 64 letters, digits, "
                                       "'-', '_' or '.')",
                                       name, backend));
  return backend;
}

FleetConfig read_fleet(const Reader& r, const toml::table& table) {
  FleetConfig fleet;
  bool have_endpoints = false;
  for (auto&& [key, value] : table) {
    const auto name = dotted("fleet", key);
    if (key == "etcd") {
      fleet.endpoints = endpoints(r, name, value);
      have_endpoints = true;
    } else if (key == "ca") {
      fleet.ca_file = absolute_file(r, name, value);
    } else if (key == "cert") {
      fleet.cert_file = absolute_file(r, name, value);
    } else if (key == "key") {
      fleet.key_file = absolute_file(r, name, value);
    } else if (key == "user") {
      fleet.user = r.string(name, value);
    } else if (key == "password_file") {
      fleet.password_file = absolute_file(r, name, value);
    } else if (key == "max_concurrent") {
      fleet.max_concurrent = max_concurrent(r, name, value);
    } else if (key == "lease_ttl") {
      fleet.lease_ttl = r.duration(name, value, kLeaseRange);
    } else if (key == "on_unreachable") {
      fleet.on_unreachable = on_unreachable(r, name, value);
    } else if (key == "unreachable_after") {
      fleet.unreachable_after = r.duration(name, value, kUnreachableRange);
    } else if (key == "backend") {
      fleet.backend = read_backend(r, name, value);
    } else if (key == "host") {
      fleet.host = r.string(name, value);
      if (!is_valid_host_name(fleet.host))
        r.fail(value.source(), fmt::format("{}: \"{}\" is not a host name (1 to 253 letters, "
                                           "digits, '-', '_' or '.')",
                                           name, fleet.host));
    } else {
      fail_unknown_key(r, name, key);
    }
  }
  if (!have_endpoints) r.fail(table.source(), "fleet: needs etcd = [\"http://host:2379\", ...]");
  check_tls(r, table, fleet);
  return fleet;
}

}  // namespace config_detail
}  // namespace trimd
