#include "etcd_member.hpp"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

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
  std::string listen = plan.client_url;
  for (const auto& address : plan.also_listen_on)
    listen += ",http://" + address + plan.client_url.substr(plan.client_url.rfind(':'));
  std::vector<std::string> argv{"etcd",
                                "--name=" + plan.name,
                                "--data-dir=" + (dir / (plan.name + ".data")).string(),
                                "--listen-client-urls=" + listen,
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

int port_of(const std::string& url) { return std::stoi(url.substr(url.rfind(':') + 1)); }

// The inode of the socket listening on 127.0.0.1:`port`, from /proc/net/tcp
// (addresses in hex, state 0A = LISTEN); 0 if none.
unsigned long listener_inode(int port) {
  std::ifstream table("/proc/net/tcp");
  std::string line;
  std::getline(table, line);  // header
  char wanted[16];
  std::snprintf(wanted, sizeof wanted, "0100007F:%04X", port);
  while (std::getline(table, line)) {
    std::istringstream fields(line);
    std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout;
    unsigned long inode = 0;
    fields >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >>
        timeout >> inode;
    if (local == wanted && state == "0A") return inode;
  }
  return 0;
}

bool holds_socket(pid_t pid, unsigned long inode) {
  const std::string target = "socket:[" + std::to_string(inode) + "]";
  std::error_code error;
  for (const auto& entry :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", error)) {
    std::error_code link_error;
    if (std::filesystem::read_symlink(entry.path(), link_error) == target) return true;
  }
  return false;
}

bool listens_on(pid_t pid, int port) {
  const auto inode = listener_inode(port);
  return inode != 0 && holds_socket(pid, inode);
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
  wait_for_listeners(plan, log_path);
}

// The ports were free when planned, not reserved: another test's etcd (or
// any outgoing connection) can take one before this etcd binds it. Then
// this etcd exits, and a client would talk to the other one. So the
// process is ours only once its own pid holds both listeners.
void EtcdProcess::wait_for_listeners(const MemberPlan& plan, const std::filesystem::path& log) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds{20};
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      throw PortTaken("etcd " + plan.name + " exited before listening on " + plan.client_url +
                      " and " + plan.peer_url + " (log: " + log.string() + ")");
    }
    if (listens_on(pid_, port_of(plan.client_url)) && listens_on(pid_, port_of(plan.peer_url)))
      return;
    std::this_thread::sleep_for(std::chrono::milliseconds{20});
  }
  kill();
  throw std::runtime_error("etcd " + plan.name +
                           " did not listen within 20 s (log: " + log.string() + ")");
}

// SIGKILL: its data dir goes with the test, and a graceful stop of a
// leader (handing leadership on) or of a stopped member takes seconds.
EtcdProcess::~EtcdProcess() { kill(); }

// kill() returns once SIGSTOP is queued; the process stops when one of its
// threads takes the signal, and on a loaded machine the others can serve a
// request meanwhile. The parent learns the whole group has stopped from
// waitid(WSTOPPED), so a test that pauses etcd gets an etcd that no longer answers.
void EtcdProcess::pause() const {
  if (::kill(pid_, SIGSTOP) != 0) throw_errno("kill SIGSTOP etcd");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds{10};
  while (std::chrono::steady_clock::now() < deadline) {
    siginfo_t info{};
    if (::waitid(P_PID, static_cast<id_t>(pid_), &info, WSTOPPED | WNOHANG) != 0)
      throw_errno("waitid etcd");
    if (info.si_pid == pid_) return;
    std::this_thread::sleep_for(std::chrono::milliseconds{2});
  }
  throw std::runtime_error("etcd " + url_ + " did not stop within 10 s of SIGSTOP");
}

void EtcdProcess::resume() const { ::kill(pid_, SIGCONT); }

void EtcdProcess::kill() {
  if (pid_ < 0) return;
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

EtcdMember::EtcdMember(std::optional<ServerTls> tls, std::vector<std::string> extra_args,
                       std::vector<std::string> also_listen_on) {
  for (int attempt = 1;; ++attempt) {
    auto plan = plan_member("m1", tls);
    plan.extra_args = extra_args;
    plan.also_listen_on = also_listen_on;
    try {
      process_.emplace(plan, dir_.path());
      return;
    } catch (const PortTaken&) {
      if (attempt == kStartAttempts) throw;
      std::filesystem::remove_all(dir_.path() / (plan.name + ".data"));
    }
  }
}

std::string EtcdMember::url_on(const std::string& address) const {
  return "http://" + address + url().substr(url().rfind(':'));
}

}  // namespace trimd::test
