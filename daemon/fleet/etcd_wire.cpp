#include "etcd_wire.hpp"

#include <array>
#include <charconv>
#include <stdexcept>

namespace trimd::etcd {

namespace {

constexpr std::string_view kAlphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int sextet(char c) {
  const auto at = kAlphabet.find(c);
  return at == std::string_view::npos ? -1 : static_cast<int>(at);
}

// int64 fields come as decimal strings (proto3's JSON mapping); missing
// ones are 0, as proto3 leaves zero values out.
std::int64_t int64_field(const nlohmann::json& object, const char* name) {
  const auto it = object.find(name);
  if (it == object.end()) return 0;
  if (it->is_number_integer()) return it->get<std::int64_t>();
  if (!it->is_string()) throw std::runtime_error(std::string("etcd: ") + name + " is not a number");
  const auto& text = it->get_ref<const std::string&>();
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size())
    throw std::runtime_error(std::string("etcd: ") + name + " is not a number: " + text);
  return value;
}

std::string bytes_field(const nlohmann::json& object, const char* name) {
  const auto it = object.find(name);
  if (it == object.end()) return {};
  if (!it->is_string()) throw std::runtime_error(std::string("etcd: ") + name + " is not base64");
  auto bytes = base64_decode(it->get_ref<const std::string&>());
  if (!bytes) throw std::runtime_error(std::string("etcd: ") + name + " is not base64");
  return *bytes;
}

bool bool_field(const nlohmann::json& object, const char* name) {
  const auto it = object.find(name);
  return it != object.end() && it->is_boolean() && it->get<bool>();
}

// etcd's own message, bounded: it is quoted into logs and bus replies.
std::string error_text(const nlohmann::json& error) {
  constexpr std::size_t kMaxErrorText = 256;
  std::string text = error.is_string() ? error.get<std::string>() : error.dump();
  if (text.size() > kMaxErrorText) text = text.substr(0, kMaxErrorText) + "...";
  return text;
}

void throw_if_error(const nlohmann::json& reply) {
  if (!reply.is_object()) throw std::runtime_error("etcd: a reply that is not a JSON object");
  if (reply.contains("error") || reply.contains("code")) {
    const auto message = reply.find("message");
    throw std::runtime_error(
        "etcd: " + (message != reply.end() ? error_text(*message)
                                           : (reply.contains("error") ? error_text(reply["error"])
                                                                      : std::string("an error"))));
  }
}

void throw_if_watch_error(const nlohmann::json& message) {
  const auto error = message.find("error");
  if (error == message.end()) return;
  const bool has_text = error->is_object() && error->contains("message");
  throw std::runtime_error("etcd: watch: " + error_text(has_text ? (*error)["message"] : *error));
}

// A reply's header.revision, which every answer from the store carries: a
// reply without one is not a reply from etcd's store.
std::int64_t header_revision(const nlohmann::json& reply) {
  throw_if_error(reply);
  const auto header = reply.find("header");
  if (header == reply.end() || !header->is_object())
    throw std::runtime_error("etcd: a reply without a header");
  const auto revision = int64_field(*header, "revision");
  if (revision <= 0) throw std::runtime_error("etcd: a reply whose header names no revision");
  return revision;
}

KeyValue key_value_of(const nlohmann::json& kv) {
  if (!kv.is_object()) throw std::runtime_error("etcd: a kv is not an object");
  return KeyValue{bytes_field(kv, "key"), bytes_field(kv, "value"),
                  int64_field(kv, "create_revision"), int64_field(kv, "mod_revision"),
                  int64_field(kv, "lease")};
}

}  // namespace

std::string base64_encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const auto n = (static_cast<unsigned char>(bytes[i]) << 16) |
                   (static_cast<unsigned char>(bytes[i + 1]) << 8) |
                   static_cast<unsigned char>(bytes[i + 2]);
    for (int shift : {18, 12, 6, 0}) out += kAlphabet[(n >> shift) & 63];
  }
  if (i + 1 == bytes.size()) {
    const auto n = static_cast<unsigned char>(bytes[i]) << 16;
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += "==";
  } else if (i + 2 == bytes.size()) {
    const auto n = (static_cast<unsigned char>(bytes[i]) << 16) |
                   (static_cast<unsigned char>(bytes[i + 1]) << 8);
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += kAlphabet[(n >> 6) & 63];
    out += '=';
  }
  return out;
}

std::optional<std::string> base64_decode(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  std::string out;
  for (std::size_t i = 0; i < text.size(); i += 4) {
    std::array<int, 4> s{};
    int padding = 0;
    for (int j = 0; j < 4; ++j) {
      const char c = text[i + static_cast<std::size_t>(j)];
      const bool last_group = i + 4 == text.size();
      if (c == '=' && last_group && j >= 2 && (j == 3 || text[i + 3] == '=')) {
        s[static_cast<std::size_t>(j)] = 0;
        ++padding;
        continue;
      }
      if (padding > 0) return std::nullopt;
      s[static_cast<std::size_t>(j)] = sextet(c);
      if (s[static_cast<std::size_t>(j)] < 0) return std::nullopt;
    }
    const auto n = (s[0] << 18) | (s[1] << 12) | (s[2] << 6) | s[3];
    out += static_cast<char>((n >> 16) & 0xff);
    if (padding < 2) out += static_cast<char>((n >> 8) & 0xff);
    if (padding < 1) out += static_cast<char>(n & 0xff);
  }
  return out;
}

std::string prefix_range_end(std::string_view prefix) {
  std::string end(prefix);
  while (!end.empty()) {
    auto& last = reinterpret_cast<unsigned char&>(end.back());
    if (last < 0xff) {
      ++last;
      return end;
    }
    end.pop_back();
  }
  return std::string(1, '\0');  // every key: etcd's "all keys" end
}

nlohmann::json lease_grant_request(std::int64_t ttl_seconds) { return {{"TTL", ttl_seconds}}; }

nlohmann::json lease_keepalive_request(std::int64_t lease) { return {{"ID", lease}}; }

nlohmann::json put_request(std::string_view key, std::string_view value, std::int64_t lease) {
  nlohmann::json body{{"key", base64_encode(key)}, {"value", base64_encode(value)}};
  if (lease != 0) body["lease"] = lease;
  return body;
}

nlohmann::json range_prefix_request(std::string_view prefix, std::int64_t limit, bool keys_only) {
  nlohmann::json body{{"key", base64_encode(prefix)},
                      {"range_end", base64_encode(prefix_range_end(prefix))},
                      {"sort_target", "CREATE"},
                      {"sort_order", "ASCEND"}};
  if (limit > 0) body["limit"] = limit;
  if (keys_only) body["keys_only"] = true;
  return body;
}

nlohmann::json delete_request(std::string_view key) { return {{"key", base64_encode(key)}}; }

nlohmann::json watch_prefix_request(std::string_view prefix, std::int64_t start_revision) {
  nlohmann::json create{{"key", base64_encode(prefix)},
                        {"range_end", base64_encode(prefix_range_end(prefix))}};
  if (start_revision > 0) create["start_revision"] = start_revision;
  return {{"create_request", std::move(create)}};
}

std::size_t watch_events_in(const nlohmann::json& message) {
  if (!message.is_object()) throw std::runtime_error("etcd: a watch message that is not an object");
  throw_if_watch_error(message);
  const auto result = message.find("result");
  if (result == message.end() || !result->is_object()) return 0;
  const auto events = result->find("events");
  return events != result->end() && events->is_array() ? events->size() : 0;
}

nlohmann::json authenticate_request(std::string_view user, std::string_view password) {
  return {{"name", user}, {"password", password}};
}

std::int64_t lease_id_of(const nlohmann::json& reply) {
  throw_if_error(reply);
  const auto id = int64_field(reply, "ID");
  if (id == 0) throw std::runtime_error("etcd: the lease grant names no lease");
  return id;
}

std::int64_t ttl_of(const nlohmann::json& reply) {
  throw_if_error(reply);
  // The gateway streams keep-alive replies as {"result": {...}}.
  const auto& result = reply.contains("result") ? reply.at("result") : reply;
  return int64_field(result, "TTL");
}

std::vector<KeyValue> kvs_of(const nlohmann::json& reply) { return range_of(reply).kvs; }

RangeReply range_of(const nlohmann::json& reply) {
  const auto revision = header_revision(reply);
  RangeReply out;
  out.revision = revision;
  out.count = int64_field(reply, "count");
  const auto more = reply.find("more");
  out.more = more != reply.end() && more->is_boolean() && more->get<bool>();
  const auto it = reply.find("kvs");
  if (it == reply.end()) return out;
  if (!it->is_array()) throw std::runtime_error("etcd: kvs is not an array");
  out.kvs.reserve(it->size());
  for (const auto& kv : *it) out.kvs.push_back(key_value_of(kv));
  return out;
}

WatchMessage watch_message_of(const nlohmann::json& message) {
  if (!message.is_object()) throw std::runtime_error("etcd: a watch message that is not an object");
  throw_if_watch_error(message);
  const auto result = message.find("result");
  if (result == message.end() || !result->is_object())
    throw std::runtime_error("etcd: a watch message without a result");
  WatchMessage out;
  out.revision = header_revision(*result);
  out.created = bool_field(*result, "created");
  out.canceled = bool_field(*result, "canceled");
  out.compact_revision = int64_field(*result, "compact_revision");
  const auto reason = result->find("cancel_reason");
  if (reason != result->end() && reason->is_string())
    out.cancel_reason = reason->get<std::string>();
  const auto events = result->find("events");
  if (events == result->end()) return out;
  if (!events->is_array()) throw std::runtime_error("etcd: watch events are not an array");
  out.events.reserve(events->size());
  for (const auto& event : *events) {
    if (!event.is_object()) throw std::runtime_error("etcd: a watch event is not an object");
    WatchEvent parsed;
    const auto type = event.find("type");
    if (type != event.end() && type->is_string() && type->get_ref<const std::string&>() == "DELETE")
      parsed.type = WatchEvent::Type::Delete;
    else if (type != event.end() &&
             !(type->is_string() && type->get_ref<const std::string&>() == "PUT"))
      throw std::runtime_error("etcd: a watch event of an unknown type");
    const auto kv = event.find("kv");
    if (kv == event.end()) throw std::runtime_error("etcd: a watch event without its key");
    parsed.kv = key_value_of(*kv);
    out.events.push_back(std::move(parsed));
  }
  return out;
}

std::int64_t revision_of(const nlohmann::json& reply) {
  throw_if_error(reply);
  const auto it = reply.find("header");
  return it == reply.end() || !it->is_object() ? 0 : int64_field(*it, "revision");
}

std::string token_of(const nlohmann::json& reply) {
  throw_if_error(reply);
  const auto it = reply.find("token");
  if (it == reply.end() || !it->is_string() || it->get_ref<const std::string&>().empty())
    throw std::runtime_error("etcd: the authentication reply names no token");
  return it->get<std::string>();
}

bool rejects_token(long http_status, const nlohmann::json& reply) {
  constexpr int kUnauthenticated = 16;  // gRPC status code
  if (http_status == 401) return true;
  if (!reply.is_object()) return false;
  const auto code = reply.find("code");
  if (code != reply.end() && code->is_number_integer() && code->get<int>() == kUnauthenticated)
    return true;
  const auto message = reply.find("message");
  return message != reply.end() && message->is_string() &&
         message->get_ref<const std::string&>().find("revision of auth store is old") !=
             std::string::npos;
}

}  // namespace trimd::etcd
