#include "etcd_client.hpp"

#include <sys/epoll.h>

#include <stdexcept>

namespace trimd::etcd {

struct Client::Request {
  CURL* easy = nullptr;
  curl_slist* headers = nullptr;
  std::string body;
  std::string response;
  Done done;
  ~Request() {
    curl_slist_free_all(headers);
    curl_easy_cleanup(easy);
  }
};

namespace {

std::size_t append_response(char* data, std::size_t size, std::size_t count, void* target) {
  static_cast<std::string*>(target)->append(data, size * count);
  return size * count;
}

std::uint32_t epoll_events(int what) {
  std::uint32_t events = 0;
  if (what == CURL_POLL_IN || what == CURL_POLL_INOUT) events |= EPOLLIN;
  if (what == CURL_POLL_OUT || what == CURL_POLL_INOUT) events |= EPOLLOUT;
  return events;
}

}  // namespace

Client::Client(EventLoop& loop, ClientSettings settings)
    : loop_(loop), settings_(std::move(settings)), multi_(curl_multi_init()),
      timer_(loop, [this] { act(CURL_SOCKET_TIMEOUT, 0); }) {
  if (settings_.endpoints.empty()) throw std::invalid_argument("etcd: no endpoint");
  if (!multi_) throw std::runtime_error("etcd: curl_multi_init failed");
  curl_multi_setopt(multi_, CURLMOPT_SOCKETFUNCTION, &Client::on_socket);
  curl_multi_setopt(multi_, CURLMOPT_SOCKETDATA, this);
  curl_multi_setopt(multi_, CURLMOPT_TIMERFUNCTION, &Client::on_timer);
  curl_multi_setopt(multi_, CURLMOPT_TIMERDATA, this);
}

Client::~Client() {
  for (auto& [easy, request] : requests_) curl_multi_remove_handle(multi_, easy);
  requests_.clear();
  for (const auto fd : watched_) loop_.remove(fd);
  curl_multi_cleanup(multi_);
}

void Client::call(const std::string& path, const nlohmann::json& body, Done done) {
  auto request = std::make_unique<Request>();
  request->easy = curl_easy_init();
  if (!request->easy) {
    done(Outcome{std::nullopt, "curl_easy_init failed"});
    return;
  }
  request->body = body.dump();
  request->done = std::move(done);
  request->headers = curl_slist_append(nullptr, "Content-Type: application/json");
  CURL* easy = request->easy;
  const std::string url = endpoint() + path;
  curl_easy_setopt(easy, CURLOPT_URL, url.c_str());
  curl_easy_setopt(easy, CURLOPT_HTTPHEADER, request->headers);
  curl_easy_setopt(easy, CURLOPT_POSTFIELDS, request->body.c_str());
  curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE, static_cast<long>(request->body.size()));
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &append_response);
  curl_easy_setopt(easy, CURLOPT_WRITEDATA, &request->response);
  curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS,
                   static_cast<long>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                         settings_.request_timeout)
                                         .count()));
  curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https");
  if (!settings_.ca_file.empty()) curl_easy_setopt(easy, CURLOPT_CAINFO, settings_.ca_file.c_str());
  if (!settings_.cert_file.empty()) {
    curl_easy_setopt(easy, CURLOPT_SSLCERT, settings_.cert_file.c_str());
    curl_easy_setopt(easy, CURLOPT_SSLKEY, settings_.key_file.c_str());
  }
  curl_easy_setopt(easy, CURLOPT_PRIVATE, request.get());
  requests_[easy] = std::move(request);
  curl_multi_add_handle(multi_, easy);
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

int Client::on_timer(CURLM*, long timeout_ms, void* self) {
  auto& client = *static_cast<Client*>(self);
  if (timeout_ms < 0)
    client.timer_.disarm();
  else
    client.timer_.arm_in(std::chrono::milliseconds{timeout_ms});
  return 0;
}

void Client::act(curl_socket_t fd, int flags) {
  int running = 0;
  curl_multi_socket_action(multi_, fd, flags, &running);
  finish_done();
}

// Replies are handed out after curl is done with them, and a callback may
// start the next call at once.
void Client::finish_done() {
  int left = 0;
  while (CURLMsg* message = curl_multi_info_read(multi_, &left)) {
    if (message->msg != CURLMSG_DONE) continue;
    CURL* easy = message->easy_handle;
    const CURLcode code = message->data.result;
    curl_multi_remove_handle(multi_, easy);
    auto node = requests_.extract(easy);
    if (node.empty()) continue;
    auto request = std::move(node.mapped());
    long status = 0;
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    Outcome outcome;
    if (code != CURLE_OK) {
      outcome.error = std::string(endpoint()) + ": " + curl_easy_strerror(code);
      current_ = (current_ + 1) % settings_.endpoints.size();  // try the next one next time
    } else {
      auto parsed = nlohmann::json::parse(request->response, nullptr, false);
      if (parsed.is_discarded())
        outcome.error = endpoint() + ": HTTP " + std::to_string(status) + ", not JSON";
      else if (status != 200)
        outcome.error = endpoint() + ": HTTP " + std::to_string(status) + ": " +
                        parsed.value("message", parsed.value("error", std::string{}));
      else
        outcome.reply = std::move(parsed);
    }
    request->done(outcome);
  }
}

}  // namespace trimd::etcd
