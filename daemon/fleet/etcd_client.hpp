// An etcd v3 client over its JSON gateway, on the daemon's epoll loop:
// libcurl's multi interface reports which sockets and timeouts it waits
// for, the loop watches them, and every reply comes back as a callback on
// the loop thread. No call blocks: a slow or stopped etcd delays only the
// replies (docs/fleet.md).
#pragma once

#include "curl_library.hpp"

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
#include "fleet_config.hpp"
#include "json_bounds.hpp"
#include "stream_lines.hpp"
#include "time.hpp"

namespace trimd::etcd {

struct ClientSettings {
  std::vector<std::string> endpoints;  // http(s)://host:port, tried in turn
  std::string ca_file, cert_file, key_file;
  Duration request_timeout = std::chrono::seconds{5};
  // etcd authentication; an empty user: none. The password is never logged.
  std::string user, password;
};

// The client's settings for [fleet]: the password read from password_file
// (a trailing newline dropped), and a request timeout short enough that a
// stopped endpoint is left behind well within one lease TTL. Throws
// std::runtime_error naming the file (never its content) when it cannot be read.
ClientSettings settings_from(const FleetConfig& config);

// What bounds the client keeps, whatever etcd (or whoever answers in its
// place) sends (docs/fleet.md, "Trust"): a reply's bytes and shape, a
// stream's line, what one loop turn parses, calls in flight, connections.
// (A stream's bounds are in stream_lines.hpp.)
inline constexpr std::size_t kMaxReplyBytes = 1u << 20;
inline constexpr std::size_t kMaxCallsInFlight = 64;
// Connections per endpoint for calls; each open stream holds one more.
inline constexpr long kCallConnections = 3;

// Why a call has no reply.
enum class Failure {
  None,       // a reply
  Transport,  // no endpoint could be reached in time (refused, timed out, TLS)
  Answered,   // etcd answered, with an error (an HTTP status, a reply that is not JSON)
  Bound,      // the reply, or the call itself, went over one of the bounds above
};

// What a call came to: a reply body, or why there is none.
struct Outcome {
  std::optional<nlohmann::json> reply;
  std::string error;  // empty with a reply
  Failure failure = reply ? Failure::None : Failure::Transport;
};

class Client {
 public:
  using Done = std::function<void(const Outcome&)>;

  Client(EventLoop& loop, ClientSettings settings);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // POST `body` to `path` (e.g. "/v3/kv/range") of the current endpoint.
  // A failed transfer (refused, timed out, TLS) goes on to the next
  // endpoint, which later calls keep, until each has been tried once.
  // With a user, the call carries a token, got first if there is none yet
  // and got anew (the call sent again, once) when etcd rejects it.
  void call(const std::string& path, const nlohmann::json& body, Done done);

  // A long-lived streaming POST (etcd's /v3/watch): `message` gets each
  // JSON object the gateway sends (one per line) as it comes, on the loop,
  // or nothing where messages were dropped for a bound (a line over
  // kMaxStreamLineBytes, or more than one turn's worth): what it follows
  // must then be read anew. `ended` gets why, once, when the stream stops
  // (not after cancel()). No request timeout: only connecting is timed.
  // Returns the stream's id.
  using Message = std::function<void(const std::optional<nlohmann::json>&)>;
  std::uint64_t stream(const std::string& path, const nlohmann::json& body, Message message,
                       Done ended);
  void cancel(std::uint64_t stream_id);

  // Calls sent and not answered, and those waiting for a token.
  std::size_t in_flight() const { return requests_.size() + waiting_for_token_.size(); }
  const std::string& endpoint() const { return settings_.endpoints[current_]; }
  // How often the current endpoint was left for the next one: a stream on
  // an endpoint left behind may have gone quiet without ending.
  std::uint64_t failovers() const { return failovers_; }
  // Tokens got from etcd so far: 1 after the first call with a user, one
  // more for each token etcd no longer took.
  std::size_t tokens_fetched() const { return tokens_fetched_; }

 private:
  struct Call {
    Call(std::string path_, std::string body_, Done done_)
        : path(std::move(path_)), body(std::move(body_)), done(std::move(done_)) {}
    std::string path;
    std::string body;
    Done done;
    bool renewed = false;  // sent again with a new token: not again
    std::size_t endpoints_tried = 0;
    std::string failures;         // what each endpoint tried came to
    std::uint64_t stream_id = 0;  // a stream's: 0 for a call
    Message message;              // a stream's messages
  };
  struct Request;
  static int on_socket(CURL* easy, curl_socket_t fd, int what, void* self, void* socketp);
  static int on_timer(CURLM* multi, long timeout_ms, void* self);
  static std::size_t on_reply_bytes(char* data, std::size_t size, std::size_t count, void* request);
  static std::size_t on_stream_bytes(char* data, std::size_t size, std::size_t count,
                                     void* request);
  void refuse(Done done, std::string why);
  void update_connection_cap();
  void send(Call call, std::string token);
  void authenticate();
  void on_authenticated(const Outcome& outcome);
  bool renews_token(Request& request, long status, const nlohmann::json& reply);
  bool tries_next_endpoint(Request& request, CURLcode code);
  std::string transfer_error(const std::string& endpoint, CURLcode code, const char* detail) const;
  Outcome outcome_of(const Request& request, long status, BoundedJson parsed) const;
  void act(curl_socket_t fd, int flags);
  void deliver_stream_messages();
  Request* stream_request(std::uint64_t stream_id);
  void finish_done();
  void watch(curl_socket_t fd, int what);

  EventLoop& loop_;
  ClientSettings settings_;
  std::size_t current_ = 0;
  const CurlLibrary& curl_;  // loaded before the first handle is made
  CURLM* multi_;
  Timer timer_;
  std::optional<SteadyPoint> curl_due_;  // when timer_ calls libcurl back; none: disarmed
  std::set<curl_socket_t> watched_;
  std::map<CURL*, std::unique_ptr<Request>> requests_;
  std::string token_;  // empty: none yet, or rejected
  bool authenticating_ = false;
  std::size_t tokens_fetched_ = 0;
  std::vector<Call> waiting_for_token_;
  std::uint64_t next_stream_id_ = 1;
  std::uint64_t failovers_ = 0;
  // Calls refused for a bound, answered on the next loop turn (never from
  // inside call(), where the caller may not expect its callback yet).
  std::vector<std::pair<Done, std::string>> refused_;
  Timer refuse_timer_;
};

}  // namespace trimd::etcd
