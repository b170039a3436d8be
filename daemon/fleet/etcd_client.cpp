#include "etcd_client.hpp"

#include <sys/epoll.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "etcd_credentials.hpp"
#include "json_bounds.hpp"

namespace trimd::etcd {

struct Client::Request {
  CURL* easy = nullptr;
  curl_slist* headers = nullptr;
  Call call{{}, {}, {}};
  std::string token;         // the one it was sent with
  std::size_t endpoint = 0;  // index into the settings' endpoints
  std::string response;      // a call's reply
  bool over_bound = false;   // the reply passed kMaxReplyBytes: stopped there
  // A stream's messages not yet handed out (curl's callbacks may not call
  // back into curl, so messages wait until socket_action returns).
  StreamLines lines;
  char error[CURL_ERROR_SIZE] = {};  // curl's detail (which TLS check failed, ...)
  ~Request() {
    curl_library().slist_free_all(headers);
    curl_library().easy_cleanup(easy);
  }
};

namespace {

std::uint32_t epoll_events(int what) {
  std::uint32_t events = 0;
  if (what == CURL_POLL_IN || what == CURL_POLL_INOUT) events |= EPOLLIN;
  if (what == CURL_POLL_OUT || what == CURL_POLL_INOUT) events |= EPOLLOUT;
  return events;
}

// With TLS 1.3 the client's side of the handshake is over before etcd has
// checked its certificate: a refused one shows as the connection closed
// under the first request, often before etcd's alert can be read.
bool closed_after_handshake(CURLcode code) {
  return code == CURLE_SEND_ERROR || code == CURLE_RECV_ERROR || code == CURLE_GOT_NOTHING ||
         code == CURLE_HTTP2 || code == CURLE_HTTP2_STREAM;
}

}  // namespace

// What a failed transfer says: curl's class of error and its detail, e.g.
// "SSL connect error (... tlsv1 alert unknown ca)", and what is likely
// wrong when the detail cannot say.
std::string Client::transfer_error(const std::string& endpoint, CURLcode code,
                                   const char* detail) const {
  std::string text = curl_.easy_strerror(code);
  if (detail[0] != '\0') text += std::string(" (") + detail + ")";
  const bool alert_read = std::string_view(detail).find("alert") != std::string_view::npos;
  if (endpoint.starts_with("https://") && !settings_.cert_file.empty() &&
      closed_after_handshake(code) && !alert_read)
    text +=
        "; etcd closed the TLS connection after the handshake, as it does with a client "
        "certificate it does not trust: is cert signed by etcd's --trusted-ca-file?";
  return text;
}

namespace {

std::string etcd_message(const nlohmann::json& reply) {
  if (!reply.is_object()) return {};
  for (const char* field : {"message", "error"}) {
    const auto it = reply.find(field);
    if (it != reply.end() && it->is_string()) return it->get<std::string>();
  }
  return {};
}

}  // namespace

// A call's reply, up to kMaxReplyBytes: past that the transfer is stopped
// (curl then fails it with a write error) and the call fails for the bound.
std::size_t Client::on_reply_bytes(char* data, std::size_t size, std::size_t count, void* target) {
  auto& request = *static_cast<Request*>(target);
  const std::size_t bytes = size * count;
  if (request.response.size() + bytes > kMaxReplyBytes) {
    request.over_bound = true;
    return 0;
  }
  request.response.append(data, bytes);
  return bytes;
}

// A stream's bytes, cut into messages within the stream's bounds.
std::size_t Client::on_stream_bytes(char* data, std::size_t size, std::size_t count, void* target) {
  static_cast<Request*>(target)->lines.feed(std::string_view(data, size * count));
  return size * count;
}

ClientSettings settings_from(const FleetConfig& config) {
  ClientSettings settings;
  settings.endpoints = config.endpoints;
  settings.ca_file = config.ca_file;
  settings.cert_file = config.cert_file;
  settings.key_file = config.key_file;
  // A call to a stopped member gives up after a third of the lease, so the
  // next endpoint keeps the lease alive in time.
  settings.request_timeout =
      std::clamp<Duration>(config.lease_ttl / 3, std::chrono::seconds{1}, std::chrono::seconds{5});
  settings.user = config.user;
  settings.password = load_credentials(config);
  return settings;
}

Client::Client(EventLoop& loop, ClientSettings settings)
    : loop_(loop), settings_(std::move(settings)), curl_(curl_library()),
      multi_(curl_.multi_init()), timer_(loop,
                                         [this] {
                                           curl_due_.reset();
                                           act(CURL_SOCKET_TIMEOUT, 0);
                                         }),
      refuse_timer_(loop, [this] {
        for (auto& [done, why] : std::exchange(refused_, {}))
          done(Outcome{std::nullopt, why, Failure::Bound});
      }) {
  if (settings_.endpoints.empty()) throw std::invalid_argument("etcd: no endpoint");
  if (!multi_) throw std::runtime_error("etcd: curl_multi_init failed");
  curl_.multi_setopt(multi_, CURLMOPT_SOCKETFUNCTION, &Client::on_socket);
  curl_.multi_setopt(multi_, CURLMOPT_SOCKETDATA, this);
  curl_.multi_setopt(multi_, CURLMOPT_TIMERFUNCTION, &Client::on_timer);
  curl_.multi_setopt(multi_, CURLMOPT_TIMERDATA, this);
  update_connection_cap();
}

// A handful of connections per endpoint for calls, one more per open
// stream (a stream holds its connection for as long as it lasts; without
// its own, calls would queue behind it for ever). Calls beyond wait for a
// connection; idle ones beyond the cap are closed.
void Client::update_connection_cap() {
  long streams = 0;
  for (const auto& [easy, request] : requests_)
    if (request->call.message) ++streams;
  const long cap = kCallConnections + streams;
  curl_.multi_setopt(multi_, CURLMOPT_MAX_HOST_CONNECTIONS, cap);
  curl_.multi_setopt(multi_, CURLMOPT_MAX_TOTAL_CONNECTIONS, cap);
  curl_.multi_setopt(multi_, CURLMOPT_MAXCONNECTS, cap);
}

void Client::refuse(Done done, std::string why) {
  refused_.emplace_back(std::move(done), std::move(why));
  refuse_timer_.arm_in(Duration{0});
}

Client::~Client() {
  for (auto& [easy, request] : requests_) curl_.multi_remove_handle(multi_, easy);
  requests_.clear();
  for (const auto fd : watched_) loop_.remove(fd);
  curl_.multi_cleanup(multi_);
}

void Client::call(const std::string& path, const nlohmann::json& body, Done done) {
  if (in_flight() >= kMaxCallsInFlight)
    return refuse(std::move(done), fmt::format("etcd: {} refused: {} calls are in flight already",
                                               path, kMaxCallsInFlight));
  Call call{path, body.dump(), std::move(done)};
  if (settings_.user.empty() || !token_.empty()) return send(std::move(call), token_);
  waiting_for_token_.push_back(std::move(call));
  authenticate();
}

std::uint64_t Client::stream(const std::string& path, const nlohmann::json& body, Message message,
                             Done ended) {
  Call call{path, body.dump(), std::move(ended)};
  call.stream_id = next_stream_id_++;
  call.message = std::move(message);
  const auto id = call.stream_id;
  if (settings_.user.empty() || !token_.empty()) {
    send(std::move(call), token_);
  } else {
    waiting_for_token_.push_back(std::move(call));
    authenticate();
  }
  return id;
}

Client::Request* Client::stream_request(std::uint64_t stream_id) {
  for (auto& [easy, request] : requests_)
    if (request->call.stream_id == stream_id) return request.get();
  return nullptr;
}

void Client::cancel(std::uint64_t stream_id) {
  std::erase_if(waiting_for_token_,
                [stream_id](const Call& call) { return call.stream_id == stream_id; });
  Request* request = stream_request(stream_id);
  if (!request) return;
  CURL* easy = request->easy;
  curl_.multi_remove_handle(multi_, easy);
  requests_.erase(easy);
  update_connection_cap();
}

// After curl returned: a message's handler may call, stream or cancel.
void Client::deliver_stream_messages() {
  std::vector<std::uint64_t> ids;
  for (const auto& [easy, request] : requests_)
    if (!request->lines.empty()) ids.push_back(request->call.stream_id);
  for (const auto id : ids) {
    Request* request = stream_request(id);
    if (!request) continue;
    const auto messages = request->lines.take();
    const Message handler = request->call.message;  // the request may go meanwhile
    for (const auto& message : messages) handler(message);
  }
}

void Client::authenticate() {
  if (authenticating_) return;
  authenticating_ = true;
  send(
      Call{"/v3/auth/authenticate", authenticate_request(settings_.user, settings_.password).dump(),
           [this](const Outcome& outcome) { on_authenticated(outcome); }},
      {});
}

// The calls that waited for a token go out with it, or fail with why there
// is none (a wrong password, an unreachable etcd).
void Client::on_authenticated(const Outcome& outcome) {
  authenticating_ = false;
  std::string error;
  if (outcome.reply) {
    try {
      token_ = token_of(*outcome.reply);
      ++tokens_fetched_;
    } catch (const std::exception& e) {
      error = e.what();
    }
  } else {
    error = outcome.error;
  }
  auto waiting = std::move(waiting_for_token_);
  waiting_for_token_.clear();
  for (auto& call : waiting) {
    if (error.empty())
      send(std::move(call), token_);
    else
      call.done(Outcome{std::nullopt,
                        "authentication as \"" + settings_.user + "\" failed: " + error,
                        outcome.failure == Failure::None ? Failure::Answered : outcome.failure});
  }
}

void Client::send(Call call, std::string token) {
  auto request = std::make_unique<Request>();
  request->easy = curl_.easy_init();
  if (!request->easy) {
    call.done(Outcome{std::nullopt, "curl_easy_init failed"});
    return;
  }
  request->call = std::move(call);
  request->token = std::move(token);
  request->endpoint = current_;
  request->headers = curl_.slist_append(nullptr, "Content-Type: application/json");
  if (!request->token.empty())
    request->headers =
        curl_.slist_append(request->headers, ("Authorization: " + request->token).c_str());
  CURL* easy = request->easy;
  const std::string url = endpoint() + request->call.path;
  const auto& body = request->call.body;
  curl_.easy_setopt(easy, CURLOPT_URL, url.c_str());
  curl_.easy_setopt(easy, CURLOPT_HTTPHEADER, request->headers);
  curl_.easy_setopt(easy, CURLOPT_POSTFIELDS, body.c_str());
  curl_.easy_setopt(easy, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
  curl_.easy_setopt(easy, CURLOPT_ERRORBUFFER, request->error);
  const auto timeout_ms = static_cast<long>(
      std::chrono::duration_cast<std::chrono::milliseconds>(settings_.request_timeout).count());
  const bool is_stream = static_cast<bool>(request->call.message);
  if (is_stream) {
    curl_.easy_setopt(easy, CURLOPT_WRITEFUNCTION, &Client::on_stream_bytes);
    curl_.easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
    curl_.easy_setopt(easy, CURLOPT_TCP_KEEPALIVE, 1L);
  } else {
    curl_.easy_setopt(easy, CURLOPT_WRITEFUNCTION, &Client::on_reply_bytes);
    curl_.easy_setopt(easy, CURLOPT_TIMEOUT_MS, timeout_ms);
  }
  curl_.easy_setopt(easy, CURLOPT_WRITEDATA, request.get());
  // An idle connection is not kept for long: etcd's members come and go.
  curl_.easy_setopt(easy, CURLOPT_MAXAGE_CONN, 30L);
  curl_.easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  curl_.easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https");
  if (!settings_.ca_file.empty())
    curl_.easy_setopt(easy, CURLOPT_CAINFO, settings_.ca_file.c_str());
  if (!settings_.cert_file.empty()) {
    curl_.easy_setopt(easy, CURLOPT_SSLCERT, settings_.cert_file.c_str());
    curl_.easy_setopt(easy, CURLOPT_SSLKEY, settings_.key_file.c_str());
  }
  curl_.easy_setopt(easy, CURLOPT_PRIVATE, request.get());
  requests_[easy] = std::move(request);
  if (is_stream) update_connection_cap();
  curl_.multi_add_handle(multi_, easy);
}

int Client::on_socket(CURL*, curl_socket_t fd, int what, void* self, void*) {
  static_cast<Client*>(self)->watch(fd, what);
  return 0;
}

void Client::watch(curl_socket_t fd, int what) {
  if (what == CURL_POLL_REMOVE) {
    if (watched_.erase(fd)) loop_.remove(fd);
    return;
  }
  const auto events = epoll_events(what);
  if (watched_.count(fd)) {
    loop_.modify(fd, events);
    return;
  }
  loop_.add(fd, events, [this, fd](std::uint32_t ready) {
    int flags = 0;
    if (ready & EPOLLIN) flags |= CURL_CSELECT_IN;
    if (ready & EPOLLOUT) flags |= CURL_CSELECT_OUT;
    if (ready & (EPOLLERR | EPOLLHUP)) flags |= CURL_CSELECT_ERR;
    act(fd, flags);
  });
  watched_.insert(fd);
}

// libcurl says again and again when it wants to be called: the timer is
// set only when that changes (a system call each time, on every transfer).
int Client::on_timer(CURLM*, long timeout_ms, void* self) {
  auto& client = *static_cast<Client*>(self);
  if (timeout_ms < 0) {
    if (client.curl_due_) client.timer_.disarm();
    client.curl_due_.reset();
    return 0;
  }
  const auto due = SteadyClock::now() + std::chrono::milliseconds{timeout_ms};
  if (client.curl_due_ && due - *client.curl_due_ < std::chrono::milliseconds{1} &&
      *client.curl_due_ - due < std::chrono::milliseconds{1})
    return 0;
  client.curl_due_ = due;
  client.timer_.arm_in(std::chrono::milliseconds{timeout_ms});
  return 0;
}

void Client::act(curl_socket_t fd, int flags) {
  int running = 0;
  curl_.multi_socket_action(multi_, fd, flags, &running);
  deliver_stream_messages();
  finish_done();
}

// A token etcd no longer takes is dropped and the call queued for a new
// one, once; a call already sent again, or the authentication itself, is not.
bool Client::renews_token(Request& request, long status, const nlohmann::json& reply) {
  if (request.token.empty() || request.call.renewed || !rejects_token(status, reply)) return false;
  if (token_ == request.token) token_.clear();
  request.call.renewed = true;
  waiting_for_token_.push_back(std::move(request.call));
  authenticate();
  return true;
}

// Every endpoint is tried once before a call fails; the one that answers
// stays the current one.
bool Client::tries_next_endpoint(Request& request, CURLcode code) {
  auto& call = request.call;
  if (!call.failures.empty()) call.failures += "; ";
  const auto& where = settings_.endpoints[request.endpoint];
  call.failures += where + ": " + transfer_error(where, code, request.error);
  if (current_ == request.endpoint && settings_.endpoints.size() > 1) {
    current_ = (current_ + 1) % settings_.endpoints.size();
    ++failovers_;
  }
  if (++call.endpoints_tried >= settings_.endpoints.size()) return false;
  send(std::move(call), request.token);
  return true;
}

Outcome Client::outcome_of(const Request& request, long status, BoundedJson parsed) const {
  const std::string& where = settings_.endpoints[request.endpoint];
  if (parsed.fault == JsonFault::NotJson)
    return Outcome{std::nullopt, where + ": HTTP " + std::to_string(status) + ", not JSON",
                   Failure::Answered};
  if (parsed.fault != JsonFault::None)
    return Outcome{std::nullopt,
                   fmt::format("{}: the reply to {} is {}", where, request.call.path, parsed.error),
                   Failure::Bound};
  if (status != 200)
    return Outcome{std::nullopt,
                   where + ": HTTP " + std::to_string(status) + ": " + etcd_message(parsed.value),
                   Failure::Answered};
  return Outcome{std::move(parsed.value), {}, Failure::None};
}

// Replies are handed out after curl is done with them, and a callback may
// start the next call at once.
void Client::finish_done() {
  int left = 0;
  while (CURLMsg* message = curl_.multi_info_read(multi_, &left)) {
    if (message->msg != CURLMSG_DONE) continue;
    CURL* easy = message->easy_handle;
    const CURLcode code = message->data.result;
    curl_.multi_remove_handle(multi_, easy);
    auto node = requests_.extract(easy);
    if (node.empty()) continue;
    auto request = std::move(node.mapped());
    if (request->call.message) update_connection_cap();
    long status = 0;
    curl_.easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    if (request->over_bound) {
      request->call.done(Outcome{
          std::nullopt,
          fmt::format("{}: the reply to {} is over {} bytes, the bound",
                      settings_.endpoints[request->endpoint], request->call.path, kMaxReplyBytes),
          Failure::Bound});
      continue;
    }
    if (code != CURLE_OK) {
      if (!tries_next_endpoint(*request, code))
        request->call.done(Outcome{std::nullopt, request->call.failures, Failure::Transport});
      continue;
    }
    auto reply = parse_bounded(request->response, kEtcdReplyLimits);
    if (renews_token(*request, status, reply.value)) continue;
    request->call.done(outcome_of(*request, status, std::move(reply)));
  }
}

}  // namespace trimd::etcd
