#include "hostile_etcd.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <stdexcept>
#include <system_error>

#include <nlohmann/json.hpp>

namespace trimd::test {

namespace {

constexpr std::size_t kMaxRequestBytes = 1u << 20;

// A request's path and body, read from `fd` (false: the peer went, or
// sent more than a test's client ever would).
bool read_request(int fd, std::string& buffer, std::string& path, std::string& body) {
  char chunk[4096];
  std::size_t header_end;
  while ((header_end = buffer.find("\r\n\r\n")) == std::string::npos) {
    const auto n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n <= 0 || buffer.size() > kMaxRequestBytes) return false;
    buffer.append(chunk, static_cast<std::size_t>(n));
  }
  const std::string head = buffer.substr(0, header_end);
  const auto first_space = head.find(' ');
  const auto second_space = head.find(' ', first_space + 1);
  if (first_space == std::string::npos || second_space == std::string::npos) return false;
  path = head.substr(first_space + 1, second_space - first_space - 1);
  std::size_t length = 0;
  std::string lower = head;
  std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
  if (const auto at = lower.find("content-length:"); at != std::string::npos)
    length = std::stoul(lower.substr(at + 15));
  while (buffer.size() < header_end + 4 + length) {
    const auto n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n <= 0 || buffer.size() > kMaxRequestBytes) return false;
    buffer.append(chunk, static_cast<std::size_t>(n));
  }
  body = buffer.substr(header_end + 4, length);
  buffer.erase(0, header_end + 4 + length);
  return true;
}

std::string header(std::int64_t revision) {
  return R"("header":{"cluster_id":"1","member_id":"1","revision":")" + std::to_string(revision) +
         R"(","raft_term":"2"})";
}

}  // namespace

HostileEtcd::HostileEtcd(Range range, Watch watch) : range_(range), watch_(watch) {
  listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listener_ < 0) throw std::system_error(errno, std::generic_category(), "socket");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (::bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(listener_, 64) != 0 ||
      ::getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ::close(listener_);
    throw std::system_error(errno, std::generic_category(), "listen on loopback");
  }
  port_ = ntohs(addr.sin_port);
  acceptor_ = std::thread([this] { accept_loop(); });
}

HostileEtcd::~HostileEtcd() {
  stopping_ = true;
  ::shutdown(listener_, SHUT_RDWR);
  acceptor_.join();
  ::close(listener_);
  std::vector<std::thread> servers;
  {
    std::lock_guard lock(mutex_);
    for (const int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);
    servers.swap(servers_);
  }
  for (auto& server : servers) server.join();
}

std::string HostileEtcd::url() const { return "http://127.0.0.1:" + std::to_string(port_); }

std::uint64_t HostileEtcd::requests(const std::string& path) const {
  std::lock_guard lock(mutex_);
  for (const auto& [seen, count] : requests_)
    if (seen == path) return count;
  return 0;
}

void HostileEtcd::accept_loop() {
  while (!stopping_) {
    pollfd ready{listener_, POLLIN, 0};
    if (::poll(&ready, 1, 100) <= 0) continue;
    const int fd = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    ++connections_;
    std::lock_guard lock(mutex_);
    open_fds_.push_back(fd);
    servers_.emplace_back([this, fd] { serve(fd); });
  }
}

void HostileEtcd::serve(int fd) {
  std::string buffer, path, body;
  while (!stopping_ && read_request(fd, buffer, path, body)) {
    {
      std::lock_guard lock(mutex_);
      auto it = std::find_if(requests_.begin(), requests_.end(),
                             [&](const auto& entry) { return entry.first == path; });
      if (it == requests_.end())
        requests_.emplace_back(path, 1);
      else
        ++it->second;
    }
    if (!answer(fd, path, body)) break;
  }
  std::lock_guard lock(mutex_);
  std::erase(open_fds_, fd);
  ::close(fd);
}

std::int64_t HostileEtcd::next_revision() {
  std::lock_guard lock(mutex_);
  return ++revision_;
}

bool HostileEtcd::send_all(int fd, const std::string& bytes) {
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    const auto n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<std::size_t>(n);
    bytes_sent_ += static_cast<std::uint64_t>(n);
  }
  return true;
}

bool HostileEtcd::send_chunk(int fd, const std::string& bytes) {
  char size[32];
  const int n = std::snprintf(size, sizeof size, "%zx\r\n", bytes.size());
  return send_all(fd, std::string(size, static_cast<std::size_t>(n)) + bytes + "\r\n");
}

// The lease and the writes answer as etcd does: the lease stays confirmed
// whatever the reads do (the attacks are on the reads and the watch).
bool HostileEtcd::answer(int fd, const std::string& path, const std::string& body) {
  if (path == "/v3/kv/range") return answer_range(fd);
  if (path == "/v3/watch") return answer_watch(fd);
  std::string reply;
  const auto request = nlohmann::json::parse(body, nullptr, false);
  if (path == "/v3/lease/grant") {
    reply = "{" + header(next_revision()) + R"(,"ID":"7","TTL":"5"})";
  } else if (path == "/v3/lease/keepalive") {
    reply = R"({"result":{)" + header(revision_) + R"(,"ID":"7","TTL":"5"}})";
  } else if (path == "/v3/kv/put" && request.is_object()) {
    const auto revision = next_revision();
    std::lock_guard lock(mutex_);
    std::erase_if(stored_, [&](const Stored& s) { return s.key_b64 == request.value("key", ""); });
    stored_.push_back(Stored{request.value("key", ""), request.value("value", ""),
                             request.contains("lease") ? request["lease"].dump() : "0", revision});
    reply = "{" + header(revision) + "}";
  } else if (path == "/v3/kv/deleterange" && request.is_object()) {
    const auto revision = next_revision();
    std::lock_guard lock(mutex_);
    std::erase_if(stored_, [&](const Stored& s) { return s.key_b64 == request.value("key", ""); });
    reply = "{" + header(revision) + "}";
  } else {
    reply = "{" + header(revision_) + "}";
  }
  return send_all(fd, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
                          std::to_string(reply.size()) + "\r\n\r\n" + reply);
}

std::string HostileEtcd::honest_range() {
  std::lock_guard lock(mutex_);
  std::string kvs;
  for (const auto& s : stored_) {
    if (!kvs.empty()) kvs += ",";
    const auto lease = s.lease.front() == '"' ? s.lease : "\"" + s.lease + "\"";
    kvs += R"({"key":")" + s.key_b64 + R"(","create_revision":")" + std::to_string(s.revision) +
           R"(","mod_revision":")" + std::to_string(s.revision) + R"(","version":"1","value":")" +
           s.value_b64 + R"(","lease":)" + lease + "}";
  }
  return "{" + header(revision_) + R"(,"kvs":[)" + kvs + R"(],"count":")" +
         std::to_string(stored_.size()) + "\"}";
}

bool HostileEtcd::answer_range(int fd) {
  const std::string ok = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n";
  switch (range_) {
    case Range::Honest: {
      const auto reply = honest_range();
      return send_all(fd,
                      ok + "Content-Length: " + std::to_string(reply.size()) + "\r\n\r\n" + reply);
    }
    case Range::RevisionFalls: {
      // The first read is honest; every later one answers from further back.
      auto reply = honest_range();
      std::int64_t revision;
      {
        std::lock_guard lock(mutex_);
        falling_revision_ = std::min(falling_revision_ - 1, revision_);
        revision = falling_revision_;
      }
      const auto at = reply.find(R"("revision":")") + 12;
      reply.replace(at, reply.find('"', at) - at, std::to_string(revision));
      return send_all(fd,
                      ok + "Content-Length: " + std::to_string(reply.size()) + "\r\n\r\n" + reply);
    }
    case Range::Padded: {
      // Says 550 MB are coming and sends them until the reader leaves.
      if (!send_all(fd, ok + "Content-Length: 576716800\r\n\r\n{" + header(revision_) +
                            R"(,"kvs":[{"key":"eA==","value":")"))
        return false;
      const std::string padding(64 * 1024, 'A');
      for (std::size_t sent = 0; sent < 576716800 && !stopping_; sent += padding.size())
        if (!send_all(fd, padding)) return false;
      return false;
    }
    case Range::EmptyObjects: {
      // Within the size bound: the shape bound must catch it.
      std::string reply = "{" + header(revision_) + R"(,"kvs":[)";
      while (reply.size() < (1000u << 10)) reply += "{},";
      reply += "{}]}";
      return send_all(fd,
                      ok + "Content-Length: " + std::to_string(reply.size()) + "\r\n\r\n" + reply);
    }
    case Range::DeepArray: {
      const std::string reply = std::string(256u << 10, '[') + std::string(256u << 10, ']');
      return send_all(fd,
                      ok + "Content-Length: " + std::to_string(reply.size()) + "\r\n\r\n" + reply);
    }
  }
  return false;
}

bool HostileEtcd::answer_watch(int fd) {
  if (!send_all(fd,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                "Transfer-Encoding: chunked\r\n\r\n"))
    return false;
  if (!send_chunk(fd, R"({"result":{)" + header(revision_) + R"(,"created":true}})" + "\n"))
    return false;
  switch (watch_) {
    case Watch::Honest:
      // Quiet: the coordinator's own reads keep its view (the tests here
      // attack elsewhere).
      while (!stopping_) {
        pollfd ready{fd, POLLIN, 0};
        if (::poll(&ready, 1, 100) > 0) {
          char byte;
          if (::recv(fd, &byte, 1, MSG_PEEK) <= 0) return false;
        }
      }
      return false;
    case Watch::EndlessLine: {
      const std::string bytes(64 * 1024, 'x');
      while (!stopping_)
        if (!send_chunk(fd, bytes)) return false;
      return false;
    }
    case Watch::Flood: {
      // Events for a key of nobody's (it changes no standing) as fast as
      // the reader takes them; each one a write, as in a real etcd, so a
      // range read is never behind the watch (that is another liar's test).
      while (!stopping_) {
        const auto revision = next_revision();
        const auto line =
            R"({"result":{)" + header(revision) +
            R"(,"events":[{"kv":{"key":"L3RyaW1kL3YxL3Bvb2wtYS9ub2JvZHkvZnM=","create_revision":")" +
            std::to_string(revision) + R"(","mod_revision":")" + std::to_string(revision) +
            R"(","value":"e30=","lease":"9"}}]}})" + "\n";
        if (!send_chunk(fd, line)) return false;
      }
      return false;
    }
  }
  return false;
}

}  // namespace trimd::test
