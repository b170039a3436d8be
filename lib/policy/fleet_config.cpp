// [fleet] of trimd.toml, read with the same typed, located errors as the
// rest of the policy.
#include "fleet_config.hpp"

#include <algorithm>
#include <cctype>
#include <utility>

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

std::vector<std::string> read_endpoints(const Value& value) {
  const auto* array = value.node().as_array();
  if (!array) value.fail_type("an array of etcd client URLs");
  std::vector<std::string> out;
  for (const auto& element : *array) {
    const Value endpoint = value.element(element);
    std::string url = endpoint.string();
    if (!url.starts_with("http://") && !url.starts_with("https://"))
      endpoint.fail(fmt::format(
          "\"{}\" is not an etcd client URL (http://host:port or https://host:port)", url));
    while (url.ends_with('/')) url.pop_back();
    out.push_back(std::move(url));
  }
  if (out.empty()) value.fail("names no etcd endpoint");
  return out;
}

std::string read_absolute_file(const Value& value) {
  std::string path = value.string();
  if (path.empty() || path.front() != '/')
    value.fail(fmt::format("\"{}\" is not an absolute path", path));
  return path;
}

unsigned read_max_concurrent(const Value& value) {
  const auto* i = value.node().as_integer();
  if (!i) value.fail_type("a whole number of passes");
  if (i->get() < 1 || i->get() > kMaxConcurrentLimit)
    value.fail(fmt::format("{} is not between 1 and {}", i->get(), kMaxConcurrentLimit));
  return static_cast<unsigned>(i->get());
}

OnUnreachable read_on_unreachable(const Value& value) {
  const std::string text = value.string();
  for (const auto what : {OnUnreachable::Local, OnUnreachable::Wait})
    if (text == to_string(what)) return what;
  value.fail(fmt::format("\"{}\" is not a choice (use \"local\" or \"wait\")", text));
}

std::string read_backend(const Value& value) {
  std::string backend = value.string();
  if (!is_valid_backend_name(backend))
    value.fail(fmt::format(
        "\"{}\" is not a backend name (1 to 64 letters, digits, '-', '_' or '.')", backend));
  return backend;
}

std::string read_host(const Value& value) {
  std::string host = value.string();
  if (!is_valid_host_name(host))
    value.fail(
        fmt::format("\"{}\" is not a host name (1 to 253 letters, digits, '-', '_' or '.')", host));
  return host;
}

// TLS needs a client certificate and its key together; either alone is a
// half-made setting that would fail only at the first connection.
void check_fleet(const FleetConfig& fleet, const Place& table) {
  if (fleet.endpoints.empty()) fail_at(table, "fleet: needs etcd = [\"http://host:2379\", ...]");
  if (fleet.cert_file.empty() != fleet.key_file.empty())
    fail_at(table, "fleet: cert and key go together (a client certificate and its key)");
  if (!fleet.user.empty() && fleet.password_file.empty())
    fail_at(table, "fleet: user needs password_file (the password is never in the policy)");
}

}  // namespace config_detail
}  // namespace trimd
