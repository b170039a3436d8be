// The etcd client against a real etcd (Debian's etcd-server) on loopback:
// leases, keys under a prefix in arrival order, a lease that expires takes
// its keys, and a stopped etcd never stalls the event loop.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>

#include "command.hpp"
#include "etcd_client.hpp"
#include "etcd_member.hpp"
#include "loop_wait.hpp"
#include "wait_until.hpp"

namespace {

using namespace std::chrono_literals;
using trimd::EventLoop;
using trimd::Timer;
namespace etcd = trimd::etcd;

class EtcdClient : public testing::Test {
 protected:
  void SetUp() override {
    TRIMD_REQUIRE_ETCD();
    member_.emplace();
    etcd::ClientSettings settings;
    settings.endpoints = {member_->url()};
    settings.request_timeout = 2s;
    client_.emplace(loop_, settings);
    ASSERT_TRUE(trimd::test::wait_until(
        [&] { return call("/v3/kv/range", etcd::range_prefix_request("/")).reply.has_value(); },
        20s, 200ms))
        << "etcd did not answer at " << member_->url();
  }

  // One call, the loop run until its reply (or `limit`).
  etcd::Outcome call(const std::string& path, const nlohmann::json& body) {
    return trimd::test::call_and_wait(loop_, *client_, path, body);
  }

  std::vector<etcd::KeyValue> keys(const std::string& prefix) {
    const auto outcome = call("/v3/kv/range", etcd::range_prefix_request(prefix));
    if (!outcome.reply) throw std::runtime_error(outcome.error);
    return etcd::kvs_of(*outcome.reply);
  }

  EventLoop loop_;
  std::optional<trimd::test::EtcdMember> member_;
  std::optional<etcd::Client> client_;
};

TEST_F(EtcdClient, KeysUnderAPrefixComeInTheOrderTheyWereCreated) {
  const auto lease = call("/v3/lease/grant", etcd::lease_grant_request(30));
  ASSERT_TRUE(lease.reply) << lease.error;
  const auto id = etcd::lease_id_of(*lease.reply);
  for (const char* host : {"web3", "db1", "app2"})
    ASSERT_TRUE(
        call("/v3/kv/put", etcd::put_request(std::string("/trimd/v1/pool-a/") + host, host, id))
            .reply);
  ASSERT_TRUE(call("/v3/kv/put", etcd::put_request("/trimd/v1/pool-b/x", "x", id)).reply);
  const auto kvs = keys("/trimd/v1/pool-a/");
  ASSERT_EQ(kvs.size(), 3u);
  EXPECT_EQ(kvs[0].value, "web3");
  EXPECT_EQ(kvs[1].value, "db1");
  EXPECT_EQ(kvs[2].value, "app2");
  EXPECT_LT(kvs[0].create_revision, kvs[1].create_revision);
  EXPECT_EQ(kvs[0].lease, id);
  ASSERT_TRUE(call("/v3/kv/deleterange", etcd::delete_request("/trimd/v1/pool-a/web3")).reply);
  EXPECT_EQ(keys("/trimd/v1/pool-a/").size(), 2u);
}

TEST_F(EtcdClient, ALeaseThatIsNotKeptAliveTakesItsKeysWithIt) {
  const auto lease = call("/v3/lease/grant", etcd::lease_grant_request(5));
  ASSERT_TRUE(lease.reply) << lease.error;
  const auto id = etcd::lease_id_of(*lease.reply);
  ASSERT_TRUE(call("/v3/kv/put", etcd::put_request("/trimd/v1/p/crashed", "h", id)).reply);
  const auto alive = call("/v3/lease/keepalive", etcd::lease_keepalive_request(id));
  ASSERT_TRUE(alive.reply) << alive.error;
  EXPECT_EQ(etcd::ttl_of(*alive.reply), 5);
  EXPECT_TRUE(trimd::test::wait_until([&] { return keys("/trimd/v1/p/").empty(); }, 15s, 250ms))
      << "the key outlived its lease";
}

TEST_F(EtcdClient, AStoppedEtcdNeverStallsTheLoop) {
  member_->pause();
  std::optional<etcd::Outcome> outcome;
  client_->call("/v3/kv/range", etcd::range_prefix_request("/"), [&](const etcd::Outcome& o) {
    outcome = o;
    loop_.quit();
  });
  // A timer of the loop fires on time while the call waits for an etcd that
  // does not answer: every other source of the loop is served meanwhile.
  int ticks = 0;
  Timer tick(loop_, [&] {
    if (++ticks == 10) loop_.quit();
  });
  tick.arm_every(50ms);
  const auto start = std::chrono::steady_clock::now();
  loop_.run();
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_FALSE(outcome) << "etcd answered while stopped";
  EXPECT_LT(elapsed, 1500ms)
      << "ten 50 ms ticks took "
      << std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count() << " ms";
  tick.disarm();
  // Then the call times out on its own, with an error that names etcd.
  Timer guard(loop_, [&] { loop_.quit(); });
  guard.arm_in(10s);
  loop_.run();
  ASSERT_TRUE(outcome) << "the call never timed out";
  EXPECT_FALSE(outcome->reply);
  EXPECT_NE(outcome->error.find(member_->url()), std::string::npos) << outcome->error;
  member_->resume();
}

// The fleet tests plan free ports and start etcd on them; a port can be
// taken in between (by a parallel test's etcd). That etcd must not pass for
// the one the test started.
TEST(EtcdProcessStart, AnEtcdWhosePortWasTakenIsReportedNotMistakenForTheOneListening) {
  TRIMD_REQUIRE_ETCD();
  const int taker = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(taker, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::bind(taker, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(taker, 4), 0);
  ASSERT_EQ(::getsockname(taker, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  auto plan = trimd::test::plan_member("m1");
  plan.client_url = "http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
  trimd::test::TempDir dir{"trimd-etcd-taken-"};
  EXPECT_THROW(trimd::test::EtcdProcess(plan, dir.path()), trimd::test::PortTaken);
  ::close(taker);
}

}  // namespace
