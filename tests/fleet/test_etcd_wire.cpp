// etcd's JSON gateway as data: base64, prefix ranges, and reading replies.
#include <gtest/gtest.h>

#include "etcd_wire.hpp"

namespace {

using namespace trimd::etcd;

TEST(EtcdWire, Base64RoundTripsEveryLengthAndByte) {
  std::string bytes;
  for (int i = 0; i < 256; ++i) bytes += static_cast<char>(i);
  for (std::size_t n = 0; n < 10; ++n)
    EXPECT_EQ(base64_decode(base64_encode(bytes.substr(0, n))), bytes.substr(0, n));
  EXPECT_EQ(base64_decode(base64_encode(bytes)), bytes);
  EXPECT_EQ(base64_encode("/trimd/v1/"), "L3RyaW1kL3YxLw==");
}

TEST(EtcdWire, Base64RefusesWhatIsNotBase64) {
  EXPECT_FALSE(base64_decode("abc"));
  EXPECT_FALSE(base64_decode("ab!d"));
  EXPECT_FALSE(base64_decode("a=bc"));
  EXPECT_FALSE(base64_decode("ab==abcd"));
}

TEST(EtcdWire, APrefixRangeEndsAfterEveryKeyWithThePrefix) {
  EXPECT_EQ(prefix_range_end("/trimd/v1/a/"), "/trimd/v1/a0");
  EXPECT_EQ(prefix_range_end(std::string("a\xff", 2)), "b");
}

TEST(EtcdWire, ARangeReplyReadsAsKeysWithTheirRevisions) {
  const auto reply = nlohmann::json::parse(R"({
    "header": {"revision": "42"},
    "kvs": [{"key": "L2s=", "value": "dg==", "create_revision": "7", "mod_revision": "9",
             "lease": "694d77aa9e38260f"}],
    "count": "1"})",
                                           nullptr, false);
  // etcd writes lease ids as decimal; a hex one is a broken reply.
  EXPECT_THROW(kvs_of(reply), std::runtime_error);
  auto fixed = reply;
  fixed["kvs"][0]["lease"] = "7587869880489510415";
  const auto kvs = kvs_of(fixed);
  ASSERT_EQ(kvs.size(), 1u);
  EXPECT_EQ(kvs[0].key, "/k");
  EXPECT_EQ(kvs[0].value, "v");
  EXPECT_EQ(kvs[0].create_revision, 7);
  EXPECT_EQ(kvs[0].lease, 7587869880489510415);
  EXPECT_EQ(revision_of(fixed), 42);
}

TEST(EtcdWire, AnErrorReplySaysSo) {
  const auto reply = nlohmann::json::parse(R"({"error":"etcdserver: requested lease not found",
                                               "code":5,"message":"etcdserver: requested lease not found"})");
  EXPECT_THROW(lease_id_of(reply), std::runtime_error);
  EXPECT_THROW(kvs_of(reply), std::runtime_error);
}

TEST(EtcdWire, RequestsCarryKeysInBase64) {
  const auto put = put_request("/k", "v", 5);
  EXPECT_EQ(put["key"], "L2s=");
  EXPECT_EQ(put["value"], "dg==");
  EXPECT_EQ(put["lease"], 5);
  EXPECT_FALSE(put_request("/k", "v", 0).contains("lease"));
  const auto range = range_prefix_request("/p/");
  EXPECT_EQ(range["range_end"], base64_encode("/p0"));
  EXPECT_EQ(range["sort_target"], "CREATE");
}

TEST(EtcdWire, AWatchMessageSaysHowManyKeysChanged) {
  EXPECT_EQ(watch_events_in(
                nlohmann::json::parse(R"({"result":{"header":{"revision":"7"},"created":true}})")),
            0u);
  EXPECT_EQ(watch_events_in(nlohmann::json::parse(
                R"({"result":{"header":{"revision":"8"},"events":[{"type":"DELETE"},{}]}})")),
            2u);
  EXPECT_THROW(watch_events_in(nlohmann::json::parse(
                   R"({"error":{"grpc_code":14,"message":"etcdserver: no leader"}})")),
               std::runtime_error);
}

TEST(EtcdWire, AWatchCoversThePrefixRange) {
  const auto request = watch_prefix_request("/trimd/v1/pool-a/");
  EXPECT_EQ(request["create_request"]["key"], base64_encode("/trimd/v1/pool-a/"));
  EXPECT_EQ(request["create_request"]["range_end"], base64_encode("/trimd/v1/pool-a0"));
}

}  // namespace
