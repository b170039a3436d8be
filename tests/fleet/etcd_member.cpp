#include "etcd_member.hpp"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <stdexcept>

#include "posix_util.hpp"

namespace trimd::test {

int free_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw_errno("socket");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ::close(fd);
    throw_errno("bind a loopback port");
  }
  ::close(fd);
  return ntohs(addr.sin_port);
}

MemberPlan plan_member(const std::string& name, const std::optional<ServerTls>& tls) {
  const std::string scheme = tls ? "https://" : "http://";
  MemberPlan plan;
  plan.name = name;
  plan.client_url = scheme + "127.0.0.1:" + std::to_string(free_loopback_port());
  plan.peer_url = "http://127.0.0.1:" + std::to_string(free_loopback_port());
  plan.initial_cluster = name + "=" + plan.peer_url;
  plan.tls = tls;
  return plan;
}

namespace {

std::vector<std::string> etcd_argv(const MemberPlan& plan, const std::filesystem::path& dir) {
  std::vector<std::string> argv{"etcd",
                                "--name=" + plan.name,
                                "--data-dir=" + (dir / (plan.name + ".data")).string(),
                                "--listen-client-urls=" + plan.client_url,
                                "--advertise-client-urls=" + plan.client_url,
                                "--listen-peer-urls=" + plan.peer_url,
                                "--initial-advertise-peer-urls=" + plan.peer_url,
                                "--initial-cluster=" + plan.initial_cluster,
                                "--initial-cluster-state=new"};
  if (plan.tls) {
    argv.push_back("--cert-file=" + plan.tls->cert.string());
    argv.push_back("--key-file=" + plan.tls->key.string());
    argv.push_back("--trusted-ca-file=" + plan.tls->ca.string());
    argv.push_back("--client-cert-auth");
  }
  argv.insert(argv.end(), plan.extra_args.begin(), plan.extra_args.end());
  return argv;
}

}  // namespace

EtcdProcess::EtcdProcess(const MemberPlan& plan, const std::filesystem::path& dir)
    : url_(plan.client_url) {
  const auto log_path = dir / (plan.name + ".log");
  const int log = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (log < 0) throw_errno("open " + log_path.string());
  try {
    pid_ = spawn_child(etcd_argv(plan, dir), {log, log});
  } catch (...) {
    ::close(log);
    throw;
  }
  ::close(log);
}

// SIGKILL: its data dir goes with the test, and a graceful stop of a
// leader (handing leadership on) or of a stopped member takes seconds.
EtcdProcess::~EtcdProcess() { kill(); }

void EtcdProcess::pause() const { ::kill(pid_, SIGSTOP); }

void EtcdProcess::resume() const { ::kill(pid_, SIGCONT); }

void EtcdProcess::kill() {
  if (pid_ < 0) return;
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

EtcdMember::EtcdMember(std::optional<ServerTls> tls, std::vector<std::string> extra_args) {
  auto plan = plan_member("m1", tls);
  plan.extra_args = std::move(extra_args);
  process_.emplace(plan, dir_.path());
}

}  // namespace trimd::test
