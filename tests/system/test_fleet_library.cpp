// libcurl (the fleet's etcd client) is loaded only once [fleet] is set: a
// trimd without a fleet maps neither it nor the TLS and Kerberos libraries
// it brings (W4 in docs/benchmarks.md: about 4 MiB of RSS). Read from the
// real trimd's /proc/<pid>/maps, before and after a reload that adds [fleet].
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include "trimd_process.hpp"

namespace trimd::test {
namespace {

using namespace std::chrono_literals;

// No filesystem is trimmed: every match is disabled.
constexpr const char* kTrimNothing = "[[filesystem]]\nmatch = \"*\"\nenabled = false\n";

// An etcd nobody listens on (the discard port): the fleet is set up, every
// ask answered "unreachable", nothing trimmed either way.
constexpr const char* kUnreachableFleet =
    "[fleet]\netcd = [\"http://127.0.0.1:9\"]\nbackend = \"pool-a\"\nmax_concurrent = 1\n\n";

// The mapped files of `pid` whose path holds one of `names`.
std::vector<std::string> mapped(pid_t pid, const std::vector<std::string>& names) {
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  std::vector<std::string> found;
  std::string line;
  while (std::getline(maps, line)) {
    const auto slash = line.find('/');
    if (slash == std::string::npos) continue;
    const std::string path = line.substr(slash);
    for (const auto& name : names)
      if (path.find(name) != std::string::npos &&
          std::find(found.begin(), found.end(), path) == found.end())
        found.push_back(path);
  }
  return found;
}

const std::vector<std::string> kFleetLibraries = {"/libcurl", "/libgnutls", "/libcrypto",
                                                  "/libkrb5", "/libssl"};

TEST(FleetLibrary, ATrimdWithoutAFleetMapsNoHttpOrTlsLibraryAndOneWithAFleetLoadsLibcurl) {
  TrimdSandbox sandbox;
  sandbox.write_config(kTrimNothing);
  TrimdProcess trimd(sandbox.args(), sandbox.log_path("trimd"));
  ASSERT_TRUE(trimd.wait_for_event(EventId::DaemonStarted, {}, 20s)) << trimd.log();
  EXPECT_EQ(mapped(trimd.pid(), kFleetLibraries), std::vector<std::string>{}) << trimd.log();

  sandbox.write_config(std::string(kUnreachableFleet) + kTrimNothing);
  trimd.send(SIGHUP);
  ASSERT_TRUE(trimd.wait_for_event(EventId::ConfigReloaded, {}, 20s)) << trimd.log();
  const auto loaded = mapped(trimd.pid(), {"/libcurl"});
  EXPECT_EQ(loaded.size(), 1u) << "libcurl is not mapped after [fleet] was set\n" << trimd.log();
  EXPECT_TRUE(trimd.running()) << trimd.log();
}

}  // namespace
}  // namespace trimd::test
