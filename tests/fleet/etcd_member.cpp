#include "etcd_member.hpp"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <stdexcept>

namespace trimd::test {

namespace {

int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

}  // namespace

EtcdMember::EtcdMember() {
  std::string pattern = (std::filesystem::temp_directory_path() / "trimd-etcd-XXXXXX").string();
  if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp");
  dir_ = pattern;
  const int client = free_port(), peer = free_port();
  url_ = "http://127.0.0.1:" + std::to_string(client);
  const std::string peer_url = "http://127.0.0.1:" + std::to_string(peer);
  const int log = ::open((dir_ / "etcd.log").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  pid_ = trimd::test::spawn_child(
      {"etcd", "--name=m1", "--data-dir=" + (dir_ / "data").string(),
       "--listen-client-urls=" + url_, "--advertise-client-urls=" + url_,
       "--listen-peer-urls=" + peer_url, "--initial-advertise-peer-urls=" + peer_url,
       "--initial-cluster=m1=" + peer_url},
      {log, log});
  ::close(log);
}

EtcdMember::~EtcdMember() {
  ::kill(pid_, SIGCONT);
  ::kill(pid_, SIGTERM);
  ::waitpid(pid_, nullptr, 0);
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

}  // namespace trimd::test
