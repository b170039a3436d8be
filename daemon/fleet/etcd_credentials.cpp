#include "etcd_credentials.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "regular_file.hpp"

namespace trimd::etcd {

namespace {

CredentialRefused refused(std::string_view key, const std::string& path, std::string_view why) {
  return CredentialRefused(fmt::format("fleet.{}: {} {}", key, path, why));
}

// ca, cert and key: libcurl reads them, trimd only checks them.
void check_client_files(const FleetConfig& config) {
  if (!config.ca_file.empty()) check_credential_file("ca", config.ca_file, Secrecy::Public);
  if (!config.cert_file.empty()) check_credential_file("cert", config.cert_file, Secrecy::Public);
  if (!config.key_file.empty()) check_credential_file("key", config.key_file, Secrecy::Secret);
}

// Every file checked; the password when there is a user, else "".
std::string checked_password(const FleetConfig& config) {
  check_client_files(config);
  return config.user.empty() ? std::string() : read_password_file(config.password_file);
}

// The host of "http://host:port/...": without user info or port, brackets
// dropped from an IPv6 address, in lower case.
std::string host_of(std::string_view endpoint) {
  if (const auto scheme = endpoint.find("://"); scheme != std::string_view::npos)
    endpoint.remove_prefix(scheme + 3);
  endpoint = endpoint.substr(0, endpoint.find_first_of("/?#"));
  if (const auto at = endpoint.rfind('@'); at != std::string_view::npos)
    endpoint.remove_prefix(at + 1);
  if (endpoint.starts_with('[')) {
    endpoint = endpoint.substr(1, endpoint.find(']') - 1);
  } else {
    endpoint = endpoint.substr(0, endpoint.find(':'));
  }
  std::string host(endpoint);
  std::transform(host.begin(), host.end(), host.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (host.ends_with('.')) host.pop_back();  // "localhost." is localhost too
  return host;
}

}  // namespace

// Links::Follow, here and for the password: these are the admin's files, as
// the policy is, and configuration management keeps such files as links;
// trimd's own state file is where a link would be somebody else's doing.
void check_credential_file(std::string_view key, const std::string& path, Secrecy secrecy) {
  std::optional<struct stat> st;
  try {
    st = stat_regular_file(path, Links::Follow);  // opened without blocking
  } catch (const FileRefused& e) {
    throw refused(key, path, e.what());
  }
  if (!st) throw refused(key, path, "does not exist");
  if (secrecy == Secrecy::Secret && (st->st_mode & 077) != 0)
    throw refused(key, path,
                  fmt::format("is open to group or others (mode {:04o}), and a secret must be its "
                              "owner's alone, as ssh requires of a private key: chmod 600 {}",
                              st->st_mode & 07777, path));
}

std::string read_password_file(const std::string& path) {
  check_credential_file("password_file", path, Secrecy::Secret);
  std::optional<std::string> text;
  try {
    text = read_regular_file(path, kMaxPasswordBytes, Links::Follow);
  } catch (const FileRefused& e) {
    throw refused("password_file", path, e.what());
  }
  if (!text) throw refused("password_file", path, "does not exist");
  std::string password = std::move(*text);
  if (password.ends_with('\n')) password.pop_back();
  if (password.ends_with('\r')) password.pop_back();
  if (password.empty()) throw refused("password_file", path, "is empty");
  return password;
}

void check_credential_files(const FleetConfig& config) { checked_password(config); }

void check_fleet_credentials(const Config& config, const std::string& config_path) {
  if (!config.fleet) return;
  try {
    check_credential_files(*config.fleet);
  } catch (const CredentialRefused& e) {
    throw ConfigError(config_path, 0, 0, e.what());
  }
}

bool is_loopback_endpoint(std::string_view endpoint) {
  const std::string host = host_of(endpoint);
  if (host == "localhost") return true;
  in_addr v4{};
  if (::inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (::inet_pton(AF_INET6, host.c_str(), &v6) != 1) return false;
  if (IN6_IS_ADDR_LOOPBACK(&v6)) return true;
  return IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127;
}

std::vector<std::string> cleartext_warnings(const FleetConfig& config) {
  std::vector<std::string> plain;  // http:// endpoints on other hosts
  for (const auto& endpoint : config.endpoints)
    if (endpoint.starts_with("http://") && !is_loopback_endpoint(endpoint))
      plain.push_back(endpoint);
  if (plain.empty()) return {};
  std::vector<std::string> warnings;
  if (!config.user.empty())
    warnings.push_back(fmt::format(
        "fleet: the password of etcd user \"{}\" goes in clear over plain http:// to {}: anyone "
        "on the way can read it and then act as this host in etcd; use https:// endpoints",
        config.user, fmt::join(plain, ", ")));
  if (!config.cert_file.empty())
    warnings.push_back(fmt::format(
        "fleet: cert and key are not used over plain http:// to {}: etcd cannot tell "
        "this host by its certificate, and nothing is encrypted; use https:// endpoints",
        fmt::join(plain, ", ")));
  return warnings;
}

std::string load_credentials(const FleetConfig& config) {
  std::string password = checked_password(config);
  for (const auto& warning : cleartext_warnings(config)) spdlog::warn("{}", warning);
  return password;
}

}  // namespace trimd::etcd
