// [fleet]'s credential files held to ssh's rule (a secret is its owner's
// alone), read without blocking and up to a cap, and the warnings about
// credentials over plain http:// to another host. No etcd needed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "etcd_credentials.hpp"
#include "fifo_guard.hpp"
#include "temp_dir.hpp"

namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using trimd::ConfigError;
using trimd::FleetConfig;
using namespace trimd::etcd;

class CredentialFiles : public ::testing::Test {
 protected:
  // A file holding `text`, with exactly `mode` whatever the umask.
  std::string file(const std::string& name, const std::string& text, mode_t mode) {
    const std::string path = (dir_.path() / name).string();
    std::ofstream(path) << text;
    EXPECT_EQ(::chmod(path.c_str(), mode), 0);
    return path;
  }

  std::string fifo(const std::string& name) {
    const std::string path = (dir_.path() / name).string();
    EXPECT_EQ(::mkfifo(path.c_str(), 0600), 0);
    return path;
  }

  // The message a refused file gives ("" when it was taken).
  template <typename F>
  static std::string refusal(F&& f) {
    try {
      f();
    } catch (const CredentialRefused& e) {
      return e.what();
    }
    return "";
  }

  static FleetConfig fleet_with_password(const std::string& password_file) {
    FleetConfig config;
    config.endpoints = {"http://127.0.0.1:2379"};
    config.user = "trimd";
    config.password_file = password_file;
    return config;
  }

  trimd::test::TempDir dir_{"trimd-credentials-"};
};

TEST_F(CredentialFiles, AnOwnerOnlyPasswordFileIsReadWithoutItsTrailingNewline) {
  EXPECT_EQ(read_password_file(file("a", "s3cret pass\n", 0600)), "s3cret pass");
  EXPECT_EQ(read_password_file(file("b", "s3cret\r\n", 0400)), "s3cret");
  EXPECT_EQ(read_password_file(file("c", "no newline", 0600)), "no newline");
}

TEST_F(CredentialFiles, APasswordFileGroupOrOthersMayReadIsRefusedWithTheChmodThatFixesIt) {
  for (const mode_t mode : {0640, 0604, 0620, 0644}) {
    const std::string path = file("password", "s3cret\n", mode);
    const std::string message = refusal([&] { read_password_file(path); });
    EXPECT_THAT(message, HasSubstr("fleet.password_file: " + path)) << std::oct << mode;
    EXPECT_THAT(message, HasSubstr(fmt::format("(mode {:04o})", mode)));
    EXPECT_THAT(message, HasSubstr("chmod 600 " + path));
    EXPECT_THAT(message, Not(HasSubstr("s3cret")));
  }
}

TEST_F(CredentialFiles, TheKeyIsASecretButTheCaAndCertificateArePublic) {
  FleetConfig config;
  config.endpoints = {"https://127.0.0.1:2379"};
  config.ca_file = file("ca.pem", "ca", 0644);
  config.cert_file = file("client.pem", "cert", 0644);
  config.key_file = file("client.key", "key", 0600);
  EXPECT_NO_THROW(check_credential_files(config));
  EXPECT_EQ(load_credentials(config), "") << "no user: no password";

  ::chmod(config.key_file.c_str(), 0640);
  const std::string message = refusal([&] { check_credential_files(config); });
  EXPECT_THAT(message, HasSubstr("fleet.key: " + config.key_file));
  EXPECT_THAT(message, HasSubstr("chmod 600 " + config.key_file));
}

TEST_F(CredentialFiles, AFifoIsRefusedAtOnceNeverWaitedOn) {
  const std::string password = fifo("password");
  const std::string message = trimd::test::without_blocking_on(
      password, [&] { return refusal([&] { read_password_file(password); }); });
  EXPECT_THAT(message, HasSubstr("fleet.password_file: " + password + " is a FIFO"));

  // The files libcurl would open: checked without being read.
  FleetConfig config;
  config.endpoints = {"https://127.0.0.1:2379"};
  config.ca_file = fifo("ca.pem");
  const std::string ca_message = trimd::test::without_blocking_on(
      config.ca_file, [&] { return refusal([&] { check_credential_files(config); }); });
  EXPECT_THAT(ca_message, HasSubstr("fleet.ca: " + config.ca_file + " is a FIFO"));
}

TEST_F(CredentialFiles, ASymlinkIsJudgedByTheFileItNames) {
  const std::string target = file("password", "s3cret\n", 0600);
  const std::string link = (dir_.path() / "link").string();
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
  EXPECT_EQ(read_password_file(link), "s3cret");
  ::chmod(target.c_str(), 0644);
  EXPECT_THAT(refusal([&] { read_password_file(link); }), HasSubstr("chmod 600 " + link));
}

TEST_F(CredentialFiles, AnOversizedEmptyOrMissingPasswordFileIsRefusedAndNamed) {
  const std::string big = file("big", std::string(kMaxPasswordBytes + 1, 'x'), 0600);
  EXPECT_THAT(refusal([&] { read_password_file(big); }), HasSubstr(big + " is larger than 4 KiB"));
  EXPECT_EQ(read_password_file(file("max", std::string(kMaxPasswordBytes, 'x'), 0600)).size(),
            kMaxPasswordBytes);
  const std::string empty = file("empty", "\n", 0600);
  EXPECT_THAT(refusal([&] { read_password_file(empty); }), HasSubstr(empty + " is empty"));
  const std::string missing = (dir_.path() / "missing").string();
  EXPECT_THAT(refusal([&] { read_password_file(missing); }),
              HasSubstr(missing + " does not exist"));
  const std::string directory = dir_.path().string();
  EXPECT_THAT(refusal([&] { read_password_file(directory); }),
              HasSubstr(directory + " Is a directory"));
}

TEST_F(CredentialFiles, ARefusedFileIsAnErrorOfThePolicyThatNamesIt) {
  trimd::Config config;
  config.fleet = fleet_with_password(file("password", "s3cret\n", 0644));
  try {
    check_fleet_credentials(config, "/etc/trimd/trimd.toml");
    FAIL() << "a password file others may read was taken";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.file(), "/etc/trimd/trimd.toml");
    EXPECT_THAT(e.what(), HasSubstr("/etc/trimd/trimd.toml: fleet.password_file: "));
    EXPECT_THAT(e.what(), HasSubstr("chmod 600 "));
  }
  ::chmod(config.fleet->password_file.c_str(), 0600);
  EXPECT_NO_THROW(check_fleet_credentials(config, "/etc/trimd/trimd.toml"));
  EXPECT_NO_THROW(check_fleet_credentials(trimd::Config{}, "/etc/trimd/trimd.toml"));
}

TEST(LoopbackEndpoint, IsThisMachineBy127Slash8OrColonColon1OrLocalhost) {
  for (const char* url :
       {"http://127.0.0.1:2379", "http://127.5.6.7:2379", "http://localhost:2379",
        "http://LocalHost.:2379/", "http://[::1]:2379", "http://[::ffff:127.0.0.1]:1",
        "http://user@localhost:2379", "http://127.0.0.1"})
    EXPECT_TRUE(is_loopback_endpoint(url)) << url;
  for (const char* url :
       {"http://10.0.0.5:2379", "http://etcd.example.com:2379", "http://128.0.0.1:2379",
        "http://[::2]:2379", "http://localhost.example.com:1", "http://127.0.0.1.example.com:1",
        "http://localhost@10.0.0.5:2379"})
    EXPECT_FALSE(is_loopback_endpoint(url)) << url;
}

TEST(CleartextWarnings, APasswordOverHttpToAnotherHostIsWarnedAbout) {
  FleetConfig config;
  config.user = "trimd";
  config.password_file = "/etc/trimd/etcd.password";
  for (const char* url : {"http://10.0.0.5:2379", "http://etcd.example.com:2379"}) {
    config.endpoints = {"http://127.0.0.1:2379", url};
    const auto warnings = cleartext_warnings(config);
    ASSERT_EQ(warnings.size(), 1u) << url;
    EXPECT_THAT(warnings[0], HasSubstr("\"trimd\" goes in clear over plain http:// to " +
                                       std::string(url) + ":"));
    EXPECT_THAT(warnings[0], Not(HasSubstr("127.0.0.1"))) << "a loopback endpoint is no risk";
  }
}

TEST(CleartextWarnings, ACertificateOverHttpIsWarnedAboutAsUnused) {
  FleetConfig config;
  config.endpoints = {"http://etcd.example.com:2379"};
  config.cert_file = "/etc/trimd/client.pem";
  config.key_file = "/etc/trimd/client.key";
  const auto warnings = cleartext_warnings(config);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0], HasSubstr("cert and key are not used over plain http://"));
}

TEST(CleartextWarnings, NoneForLoopbackHttpsOrNoCredentials) {
  FleetConfig config;
  config.user = "trimd";
  config.password_file = "/etc/trimd/etcd.password";
  config.cert_file = "/etc/trimd/client.pem";
  config.key_file = "/etc/trimd/client.key";
  config.endpoints = {"http://127.0.0.1:2379", "http://localhost:2379", "http://[::1]:2379"};
  EXPECT_THAT(cleartext_warnings(config), testing::IsEmpty());
  config.endpoints = {"https://10.0.0.5:2379", "https://etcd.example.com:2379"};
  EXPECT_THAT(cleartext_warnings(config), testing::IsEmpty());
  FleetConfig anonymous;
  anonymous.endpoints = {"http://10.0.0.5:2379"};
  EXPECT_THAT(cleartext_warnings(anonymous), testing::IsEmpty());
}

}  // namespace
