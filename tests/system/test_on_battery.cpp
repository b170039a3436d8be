// On battery (issue 35, item 2), end to end: the real trimd on a private
// bus with a stand-in for UPower (tests/bus/stand_ins.hpp). Due passes wait
// (WaitingFor on_battery, and trimctl says why), a TrimNow still runs, and
// the others go on once UPower says AC.
#include <gtest/gtest.h>
#include <signal.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "bus_fixture.hpp"
#include "stand_ins.hpp"
#include "trimd_process.hpp"
#include "wait_until.hpp"

namespace trimd::test {
namespace {

using namespace std::chrono_literals;

// Only the test's own filesystems, due at once, trimmed once their disks
// have been quiet for a second.
std::string policy_for(const std::vector<std::string>& mount_points) {
  std::string text =
      "[idle]\nwindow = \"1s\"\nsample_interval = \"200ms\"\n\n"
      "[trim]\nfirst_delay = \"0s\"\nrandomized_delay = \"0s\"\n\n"
      "[[filesystem]]\nmatch = \"*\"\nenabled = false\n";
  for (const auto& mount_point : mount_points)
    text += "\n[[filesystem]]\nmatch = \"" + mount_point + "\"\nenabled = true\n";
  return text;
}

class OnBattery : public ::testing::Test {
 protected:
  void SetUp() override {
    REQUIRE_ROOT_OR_FAIL();
    TRIMD_SKIP_OR_FAIL_IF(missing_tools(tools_for(Fs::Ext4)));
    TRIMD_REQUIRE_PROGRAM("dbus-daemon");
    TRIMD_REQUIRE_PROGRAM("busctl");
    bus_.emplace();
  }

  static LoopImage image_to_trim() {
    LoopImage image = LoopImage::create(64);
    image.mkfs(Fs::Ext4);
    image.mount(kNoDiscard);
    image.write_fragmented_files(64, 256 * 1024);
    image.delete_every_other();
    return image;
  }

  // trimctl --json status for `mount_point`: its object, or null.
  nlohmann::json status(const std::string& mount_point) const {
    const auto result = run_command(
        {TRIMCTL_BINARY, "--address=" + bus_->address(), "--json", "status", mount_point}, 10s);
    if (!result.ok()) return nullptr;
    const auto all = nlohmann::json::parse(result.out, nullptr, false);
    if (all.is_discarded()) return nullptr;
    for (const auto& fs : all.value("filesystems", nlohmann::json::array()))
      if (fs.value("mount_point", "") == mount_point) return fs;
    return nullptr;
  }
  std::string waiting_for(const std::string& mount_point) const {
    const auto fs = status(mount_point);
    return fs.is_object() ? fs.value("waiting_for", "") : "";
  }

  std::optional<PrivateBus> bus_;
  TrimdSandbox sandbox_;
};

TEST_F(OnBattery, DuePassesWaitATrimNowStillRunsAndTheOthersGoOnOnAc) {
  LoopImage asked = image_to_trim();
  LoopImage waiting = image_to_trim();
  UPowerStandIn upower(bus_->address(), true);
  sandbox_.write_config(policy_for({asked.mount_point(), waiting.mount_point()}));
  TrimdProcess trimd(sandbox_.args_on_bus(bus_->address()), sandbox_.log_path("trimd"));

  for (const auto* image : {&asked, &waiting})
    ASSERT_TRUE(wait_until([&] { return waiting_for(image->mount_point()) == "on_battery"; }, 30s))
        << image->mount_point() << " does not wait for AC\n"
        << trimd.log();
  const auto shown = status(waiting.mount_point());
  EXPECT_EQ(shown.value("state", ""), "waiting");
  EXPECT_NE(shown.value("state_reason", ""), "") << "trimctl says why";
  EXPECT_TRUE(trimd.events(EventId::ChunkStarted).empty()) << "nothing is trimmed on battery";

  const auto trim_now = run_command(
      bus_->busctl({"call", "org.trimd.trimd1", "/org/trimd/trimd1", "org.trimd.trimd1.Manager",
                    "TrimNow", "asb", "1", asked.mount_point(), "false"}),
      10s);
  ASSERT_TRUE(trim_now.ok()) << trim_now.err;
  EXPECT_TRUE(trimd.wait_for_event(EventId::PassFinished, asked.mount_point(), 60s))
      << "TrimNow runs on battery\n"
      << trimd.log();
  EXPECT_EQ(waiting_for(waiting.mount_point()), "on_battery");
  EXPECT_TRUE(trimd.events(EventId::ChunkStarted, waiting.mount_point()).empty());

  upower.set_on_battery(false);
  EXPECT_TRUE(trimd.wait_for_event(EventId::PassFinished, waiting.mount_point(), 60s))
      << "on AC again, the waiting pass runs\n"
      << trimd.log();
  trimd.send(SIGTERM);
  EXPECT_EQ(trimd.wait_for_exit(10s), 0) << trimd.log();
}

}  // namespace
}  // namespace trimd::test
