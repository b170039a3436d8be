// etcd (Debian's etcd-server) for the fleet tests, on free loopback ports
// with its own data dirs in a temporary directory: one member (plain or with
// TLS and client certificates) or a cluster of three (etcd_cluster.hpp).
// Every process is stopped and every directory removed with its object, on
// every exit path, a failed start included.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "command.hpp"
#include "require_program.hpp"
#include "temp_dir.hpp"

namespace trimd::test {

int free_loopback_port();

// The server side of TLS: its certificate and key, and the CA whose client
// certificates it takes (--client-cert-auth).
struct ServerTls {
  std::filesystem::path ca, cert, key;
};

// Where one member listens and whom it joins.
struct MemberPlan {
  std::string name;
  std::string client_url;  // http(s)://127.0.0.1:port
  std::string peer_url;
  std::string initial_cluster;  // name=peer_url,...
  std::optional<ServerTls> tls;
  std::vector<std::string> extra_args;  // e.g. --auth-token-ttl=1
  // More addresses to serve clients on, with the client port (a test host's
  // veth address: tests/fleet/netns_link.hpp).
  std::vector<std::string> also_listen_on;
};

// MemberPlan on two free ports (https with `tls`).
MemberPlan plan_member(const std::string& name, const std::optional<ServerTls>& tls = {});

// An etcd that exited before it listened: a planned port was taken meanwhile.
// Starting again on new ports is the cure.
struct PortTaken : std::runtime_error {
  using std::runtime_error::runtime_error;
};
inline constexpr int kStartAttempts = 5;

// One running etcd process, listening on its plan's ports (throws PortTaken
// if it could not), killed (SIGKILL) and reaped when destroyed.
class EtcdProcess {
 public:
  EtcdProcess(const MemberPlan& plan, const std::filesystem::path& dir);
  ~EtcdProcess();
  EtcdProcess(const EtcdProcess&) = delete;
  EtcdProcess& operator=(const EtcdProcess&) = delete;
  const std::string& url() const { return url_; }
  pid_t pid() const { return pid_; }
  void pause() const;   // SIGSTOP, returned once stopped: sockets open, nothing answers
  void resume() const;  // SIGCONT
  void kill();          // SIGKILL, reaped

 private:
  void wait_for_listeners(const MemberPlan& plan, const std::filesystem::path& log);

  std::string url_;
  pid_t pid_ = -1;
};

class EtcdMember {
 public:
  explicit EtcdMember(std::optional<ServerTls> tls = {}, std::vector<std::string> extra_args = {},
                      std::vector<std::string> also_listen_on = {});
  const std::string& url() const { return process_->url(); }
  // The client URL on another of its addresses (one of also_listen_on).
  std::string url_on(const std::string& address) const;
  pid_t pid() const { return process_->pid(); }
  void pause() const { process_->pause(); }
  void resume() const { process_->resume(); }

 private:
  TempDir dir_{"trimd-etcd-"};
  std::optional<EtcdProcess> process_;
};

}  // namespace trimd::test

// Skips without etcd (Debian etcd-server); under CI=true a missing etcd fails.
#define TRIMD_REQUIRE_ETCD() TRIMD_REQUIRE_PROGRAM("etcd")
