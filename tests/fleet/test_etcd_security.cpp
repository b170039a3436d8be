// The etcd client against a real etcd that asks who is calling: TLS with
// client certificates (made by openssl in the test) and etcd's own users
// and passwords. A refusal says what was refused.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "etcd_client.hpp"
#include "etcd_member.hpp"
#include "loop_wait.hpp"
#include "test_pki.hpp"
#include "wait_until.hpp"

namespace {

using namespace std::chrono_literals;
namespace etcd = trimd::etcd;
using trimd::test::call_and_wait;

bool mentions(const std::string& text, std::initializer_list<const char*> words) {
  for (const char* word : words)
    if (text.find(word) != std::string::npos) return true;
  return false;
}

class EtcdOverTls : public testing::Test {
 protected:
  void SetUp() override {
    TRIMD_REQUIRE_ETCD();
    TRIMD_REQUIRE_OPENSSL();
    pki_.emplace();
    member_.emplace(pki_->server_tls());
  }

  // A client with the cluster's CA and `identity`, after etcd answers (or 20 s).
  etcd::Outcome first_range(const trimd::test::KeyPair& identity) {
    etcd::ClientSettings settings;
    settings.endpoints = {member_->url()};
    settings.ca_file = pki_->ca();
    settings.cert_file = identity.cert;
    settings.key_file = identity.key;
    settings.request_timeout = 2s;
    etcd::Client client(loop_, settings);
    etcd::Outcome outcome;
    trimd::test::wait_until(
        [&] {
          outcome = call_and_wait(loop_, client, "/v3/kv/range", etcd::range_prefix_request("/"));
          return outcome.reply || !mentions(outcome.error, {"Couldn't connect"});
        },
        20s, 100ms);
    return outcome;
  }

  trimd::EventLoop loop_;
  std::optional<trimd::test::TestPki> pki_;
  std::optional<trimd::test::EtcdMember> member_;
};

TEST_F(EtcdOverTls, AClientWithTheClustersCaAndItsOwnCertificateIsServed) {
  const auto outcome = first_range(pki_->client());
  EXPECT_TRUE(outcome.reply) << outcome.error;
}

TEST_F(EtcdOverTls, AClientCertificateFromAnotherCaIsRefusedNamingTheTlsProblem) {
  const auto outcome = first_range(pki_->stranger_client());
  ASSERT_FALSE(outcome.reply) << "etcd served a certificate from a CA it does not trust";
  std::cout << "refused: " << outcome.error << "\n";
  EXPECT_TRUE(mentions(outcome.error, {"SSL", "TLS"})) << outcome.error;
  EXPECT_TRUE(mentions(outcome.error, {"unknown ca", "certificate"})) << outcome.error;
  EXPECT_NE(outcome.error.find(member_->url()), std::string::npos) << outcome.error;
}

// etcd with auth enabled: root, and a "trimd" user whose role may read and
// write /trimd/v1/ only. Tokens live `token_ttl` seconds.
class EtcdAuth : public testing::Test {
 protected:
  void SetUp() override {
    TRIMD_REQUIRE_ETCD();
    TRIMD_REQUIRE_PROGRAM("etcdctl");
    member_.emplace(std::nullopt, std::vector<std::string>{"--auth-token-ttl=1"});
    ASSERT_TRUE(trimd::test::wait_until(
        [&] {
          return etcdctl({"endpoint", "health"}).ok();
        },
        20s, 100ms))
        << "etcd did not answer at " << member_->url();
    for (const auto& args : std::vector<std::vector<std::string>>{
             {"user", "add", "root:root-secret"},
             {"user", "grant-role", "root", "root"},
             {"role", "add", "trimd"},
             {"role", "grant-permission", "trimd", "--prefix=true", "readwrite", "/trimd/v1/"},
             {"user", "add", "trimd:s3cret pass"},
             {"user", "grant-role", "trimd", "trimd"},
             {"auth", "enable"}}) {
      const auto result = etcdctl(args);
      ASSERT_TRUE(result.ok()) << "etcdctl " << args[0] << " " << args[1] << ": " << result.err;
    }
  }

  trimd::test::CommandResult etcdctl(std::vector<std::string> args) {
    args.insert(args.begin(), {"etcdctl", "--endpoints=" + member_->url()});
    return trimd::test::run_command(args, 10s);
  }

  // [fleet] as trimd reads it, the password in a file with a trailing newline
  // that only its owner may read (etcd_credentials.hpp).
  etcd::ClientSettings settings_with_password(const std::string& password) {
    trimd::FleetConfig fleet;
    fleet.endpoints = {member_->url()};
    fleet.user = "trimd";
    fleet.password_file = (dir_.path() / "password").string();
    std::ofstream(fleet.password_file) << password << "\n";
    EXPECT_EQ(::chmod(fleet.password_file.c_str(), 0600), 0);
    return etcd::settings_from(fleet);
  }

  etcd::Outcome put(etcd::Client& client, const std::string& key) {
    return call_and_wait(loop_, client, "/v3/kv/put", etcd::put_request(key, "v", 0));
  }

  trimd::EventLoop loop_;
  trimd::test::TempDir dir_{"trimd-etcd-auth-"};
  std::optional<trimd::test::EtcdMember> member_;
};

TEST_F(EtcdAuth, TheRightPasswordFromItsFileGetsATokenThatEveryCallCarries) {
  const auto settings = settings_with_password("s3cret pass");
  EXPECT_EQ(settings.password, "s3cret pass") << "the trailing newline is not part of it";
  etcd::Client client(loop_, settings);
  // What the coordinator does: a lease, a claim on it.
  const auto lease = call_and_wait(loop_, client, "/v3/lease/grant", etcd::lease_grant_request(30));
  ASSERT_TRUE(lease.reply) << lease.error;
  const auto written = call_and_wait(
      loop_, client, "/v3/kv/put",
      etcd::put_request("/trimd/v1/pool-a/web3", "v", etcd::lease_id_of(*lease.reply)));
  ASSERT_TRUE(written.reply) << written.error;
  EXPECT_EQ(client.tokens_fetched(), 1u) << "one token serves every call";
  const auto read =
      call_and_wait(loop_, client, "/v3/kv/range", etcd::range_prefix_request("/trimd/v1/pool-a/"));
  ASSERT_TRUE(read.reply) << read.error;
  EXPECT_EQ(etcd::kvs_of(*read.reply).size(), 1u);
  // The role reaches /trimd/v1/ only: the token is the user's, not root's.
  const auto outside = put(client, "/elsewhere");
  ASSERT_FALSE(outside.reply);
  EXPECT_NE(outside.error.find("permission denied"), std::string::npos) << outside.error;
}

TEST_F(EtcdAuth, AWrongPasswordIsAClearErrorThatNeverShowsThePassword) {
  etcd::Client client(loop_, settings_with_password("not-the-password"));
  const auto outcome = put(client, "/trimd/v1/pool-a/web3");
  ASSERT_FALSE(outcome.reply);
  EXPECT_NE(outcome.error.find("authentication as \"trimd\" failed"), std::string::npos)
      << outcome.error;
  EXPECT_NE(outcome.error.find("invalid user ID or password"), std::string::npos) << outcome.error;
  EXPECT_EQ(outcome.error.find("not-the-password"), std::string::npos) << outcome.error;
}

TEST_F(EtcdAuth, AnExpiredTokenIsRenewedAndTheCallGoesThrough) {
  etcd::Client client(loop_, settings_with_password("s3cret pass"));
  ASSERT_TRUE(put(client, "/trimd/v1/pool-a/a").reply);
  // etcd drops a simple token unused for --auth-token-ttl (1 s here),
  // checked once a second: the client's token is stale after 2.5 s.
  std::this_thread::sleep_for(2500ms);
  const auto outcome = put(client, "/trimd/v1/pool-a/b");
  EXPECT_TRUE(outcome.reply) << outcome.error;
  EXPECT_EQ(client.tokens_fetched(), 2u) << "the stale token was not the one renewed";
}

TEST(EtcdSettings, AnUnreadablePasswordFileIsNamedAndNothingIsRead) {
  trimd::FleetConfig fleet;
  fleet.endpoints = {"http://127.0.0.1:1"};
  fleet.user = "trimd";
  fleet.password_file = "/nonexistent/trimd-password";
  try {
    etcd::settings_from(fleet);
    FAIL() << "a missing password file was taken";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/trimd-password"), std::string::npos)
        << e.what();
  }
}

}  // namespace
