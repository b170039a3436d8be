// etcd's v3 JSON gateway, as data: request bodies and what replies say.
// Keys and values travel base64-encoded; revisions and lease ids as decimal
// strings (int64 in JSON). Pure: no network here (etcd_client.hpp has that).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace trimd::etcd {

std::string base64_encode(std::string_view bytes);
// Nothing for text that is not base64.
std::optional<std::string> base64_decode(std::string_view text);

// The end of a prefix range: the prefix with its last byte incremented, as
// etcd's clientv3.GetPrefixRangeEnd.
std::string prefix_range_end(std::string_view prefix);

struct KeyValue {
  std::string key;
  std::string value;
  std::int64_t create_revision = 0;
  std::int64_t mod_revision = 0;
  std::int64_t lease = 0;
};

nlohmann::json lease_grant_request(std::int64_t ttl_seconds);
nlohmann::json lease_keepalive_request(std::int64_t lease);
nlohmann::json put_request(std::string_view key, std::string_view value, std::int64_t lease);
// Every key under `prefix`, oldest first (by create revision); with a
// `limit`, only the first `limit` of them (the reply says how many there
// are); with `keys_only`, without their values.
nlohmann::json range_prefix_request(std::string_view prefix, std::int64_t limit = 0,
                                    bool keys_only = false);
nlohmann::json delete_request(std::string_view key);
// A watch on every key under `prefix` (POST /v3/watch, a stream), from
// `start_revision` on (0: from now).
nlohmann::json watch_prefix_request(std::string_view prefix, std::int64_t start_revision = 0);
// How many key events one message of a watch stream carries (0 for the
// "created" message and progress notices; throws on an error message).
std::size_t watch_events_in(const nlohmann::json& message);
nlohmann::json authenticate_request(std::string_view user, std::string_view password);

// From the replies; throw std::runtime_error on a reply that does not say
// what it should (an error reply, a field of the wrong type).
std::int64_t lease_id_of(const nlohmann::json& grant_reply);
std::int64_t ttl_of(const nlohmann::json& keepalive_reply);  // 0: the lease is gone
std::vector<KeyValue> kvs_of(const nlohmann::json& range_reply);

// A range reply whole: it must be an object with a header that names a
// revision (a nested array or an empty object is not "no keys").
struct RangeReply {
  std::vector<KeyValue> kvs;
  std::int64_t revision = 0;  // the store's revision the range was read at
  std::int64_t count = 0;     // keys in the range, also those past the limit
  bool more = false;          // keys past the limit were left out
};
RangeReply range_of(const nlohmann::json& range_reply);

// One message of a watch stream.
struct WatchEvent {
  enum class Type { Put, Delete };
  Type type = Type::Put;
  KeyValue kv;  // a Delete's carries the key and the revision only
};
struct WatchMessage {
  std::int64_t revision = 0;  // header.revision: the store's revision when sent
  bool created = false;
  bool canceled = false;              // etcd ended the watch (e.g. compacted past its start)
  std::int64_t compact_revision = 0;  // with canceled: the oldest revision still kept
  std::string cancel_reason;
  std::vector<WatchEvent> events;
};
// Throws on an error message and on one that is not a watch response.
WatchMessage watch_message_of(const nlohmann::json& message);
std::int64_t revision_of(const nlohmann::json& reply);  // header.revision
std::string token_of(const nlohmann::json& authenticate_reply);

// Whether an error reply says the auth token is no longer good (expired or
// unknown: gRPC Unauthenticated, HTTP 401; or the auth store changed since
// it was issued), so a new token may get the call through, as etcd's own
// client retries once.
bool rejects_token(long http_status, const nlohmann::json& reply);

}  // namespace trimd::etcd
