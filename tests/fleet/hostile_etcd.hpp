// An etcd that lies, for the fleet's trust tests (docs/fleet.md, "Trust"):
// a small HTTP/1.1 server on a loopback port that answers the lease calls
// as etcd does (so the lease stays confirmed) and the range reads and the
// watch stream as an attack says. It runs on its own threads, one per
// connection, and stops them all when destroyed.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace trimd::test {

class HostileEtcd {
 public:
  enum class Range {
    Honest,         // the claims put so far, as etcd sends them
    Padded,         // says 550 MB are coming, and sends them (a huge value)
    EmptyObjects,   // ~1 MB of "{}," inside an array: within the size bound
    DeepArray,      // 256 KiB of nested "[" (once read as an empty prefix)
    RevisionFalls,  // honest once, then each reply from further back in time
  };
  enum class Watch {
    Honest,       // "created", then events for every put and delete
    EndlessLine,  // "created", then bytes that never end a line
    Flood,        // "created", then a stream of event messages as fast as it can
  };

  HostileEtcd(Range range, Watch watch);
  ~HostileEtcd();
  HostileEtcd(const HostileEtcd&) = delete;
  HostileEtcd& operator=(const HostileEtcd&) = delete;

  std::string url() const;
  // Requests seen per path (e.g. "/v3/kv/range"), and connections accepted.
  std::uint64_t requests(const std::string& path) const;
  std::uint64_t connections() const { return connections_; }
  // Bytes written to watch streams and range replies (an attack's volume).
  std::uint64_t bytes_sent() const { return bytes_sent_; }

 private:
  struct Connection;
  void accept_loop();
  void serve(int fd);
  bool answer(int fd, const std::string& path, const std::string& body);
  bool answer_range(int fd);
  bool answer_watch(int fd);
  bool send_all(int fd, const std::string& bytes);
  bool send_chunk(int fd, const std::string& bytes);
  std::string honest_range();
  std::int64_t next_revision();

  Range range_;
  Watch watch_;
  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<std::uint64_t> connections_{0};
  std::atomic<std::uint64_t> bytes_sent_{0};
  std::thread acceptor_;
  mutable std::mutex mutex_;
  std::vector<std::thread> servers_;
  std::vector<int> open_fds_;
  std::vector<std::pair<std::string, std::uint64_t>> requests_;
  // The honest store: keys put (base64 as received) with their revisions.
  struct Stored {
    std::string key_b64, value_b64, lease;
    std::int64_t revision;
  };
  std::vector<Stored> stored_;
  std::int64_t revision_ = 100;
  std::int64_t falling_revision_ = 1000000;
};

}  // namespace trimd::test
