// An etcd v3 client over its JSON gateway, on the daemon's epoll loop:
// libcurl's multi interface reports which sockets and timeouts it waits
// for, the loop watches them, and every reply comes back as a callback on
// the loop thread. No call blocks: a slow or stopped etcd delays only the
// replies (docs/fleet.md).
#pragma once

#include <curl/curl.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "etcd_wire.hpp"
#include "event_loop.hpp"
#include "time.hpp"

namespace trimd::etcd {

struct ClientSettings {
  std::vector<std::string> endpoints;  // http(s)://host:port, tried in turn
  std::string ca_file, cert_file, key_file;
  Duration request_timeout = std::chrono::seconds{5};
};

// What a call came to: a reply body, or why there is none.
struct Outcome {
  std::optional<nlohmann::json> reply;
  std::string error;  // empty with a reply
};

class Client {
 public:
  using Done = std::function<void(const Outcome&)>;

  Client(EventLoop& loop, ClientSettings settings);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // POST `body` to `path` (e.g. "/v3/kv/range") of the current endpoint;
  // a failed connection moves on to the next endpoint for the next call.
  void call(const std::string& path, const nlohmann::json& body, Done done);

  std::size_t in_flight() const { return requests_.size(); }
  const std::string& endpoint() const { return settings_.endpoints[current_]; }

 private:
  struct Request;
  static int on_socket(CURL* easy, curl_socket_t fd, int what, void* self, void* socketp);
  static int on_timer(CURLM* multi, long timeout_ms, void* self);
  void act(curl_socket_t fd, int flags);
  void finish_done();
  void watch(curl_socket_t fd, int what);

  EventLoop& loop_;
  ClientSettings settings_;
  std::size_t current_ = 0;
  CURLM* multi_;
  Timer timer_;
  std::set<curl_socket_t> watched_;
  std::map<CURL*, std::unique_ptr<Request>> requests_;
};

}  // namespace trimd::etcd
