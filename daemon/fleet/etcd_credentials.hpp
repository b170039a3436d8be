// The credentials [fleet] names, held to the rules ssh and etcd's own tools
// hold them to: a secret (the client key, the password file) is readable
// and writable by its owner only; every file is a regular file, checked and
// read without blocking (a FIFO is refused at once); a password is a line,
// read up to a small cap. And credentials that would go over plain http://
// to another host are warned about, loudly (docs/fleet.md, "Auth").
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "config.hpp"
#include "fleet_config.hpp"

namespace trimd::etcd {

// A password is one line; this is generous.
inline constexpr std::size_t kMaxPasswordBytes = 4096;

// A credential file that breaks a rule. what() names the [fleet] key, the
// file and the reason, and the fix when there is one ("chmod 600 FILE").
class CredentialRefused : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Whether a file holds a secret (the key, the password) or what anyone may
// know (the CA and the client certificate).
enum class Secrecy { Public, Secret };

// Checks the file [fleet] `key` names without reading it and without
// blocking (a non-blocking open and fstat): a regular file, and for a
// Secret one, no permission for group or others. libcurl reads the key and
// certificates itself; trimd reads only the password (read_password_file()).
// Throws CredentialRefused.
void check_credential_file(std::string_view key, const std::string& path, Secrecy secrecy);

// The password in `path`: checked as a Secret, read as a regular file of at
// most kMaxPasswordBytes, one trailing newline (LF or CR LF) dropped. An
// empty password is refused. Throws CredentialRefused (never quoting the
// content).
std::string read_password_file(const std::string& path);

// Every file [fleet] names, checked as the fleet's client will use it (the
// password read, and dropped). Throws CredentialRefused.
void check_credential_files(const FleetConfig& config);

// The policy's [fleet] files checked at load (--check-config, the start, a
// reload): a refused file is an error of the policy at `config_path`, so a
// reload keeps the old one. Throws ConfigError.
void check_fleet_credentials(const Config& config, const std::string& config_path);

// Whether the endpoint's host is this machine: 127.0.0.0/8, ::1 (also as
// ::ffff:127.x.y.z) or "localhost".
bool is_loopback_endpoint(std::string_view endpoint);

// What would go over plain http:// to another host: the password in clear
// (with a user), a certificate and key that are not used at all. One
// sentence each; none for https://, a loopback host or no credentials.
std::vector<std::string> cleartext_warnings(const FleetConfig& config);

// What the fleet's etcd client needs when it starts: every file checked, the
// cleartext warnings in the log, and the password ("" without a user).
// Throws CredentialRefused.
std::string load_credentials(const FleetConfig& config);

}  // namespace trimd::etcd
