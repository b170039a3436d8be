// Where trimd learns that the machine runs on battery: UPower when it
// answers (a fake here), else the power_supply class (sysfs fixtures); a
// UPower that speaks up later takes over.
#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <vector>

#include "event_loop.hpp"
#include "power_watch.hpp"

namespace trimd {
namespace {

std::filesystem::path fixture(const std::string& name) {
  return std::filesystem::path(TRIMD_TEST_DATA) / "sysfs" / name / "class" / "power_supply";
}

class FakeUPower final : public UPower {
 public:
  void read_on_battery(std::function<void(std::optional<bool>)> done) override {
    reads.push_back(std::move(done));
  }
  void on_change(std::function<void(bool)> handler) override { changed = std::move(handler); }
  void answer(std::optional<bool> value) {
    auto done = std::move(reads.front());
    reads.erase(reads.begin());
    done(value);
  }
  std::vector<std::function<void(std::optional<bool>)>> reads;
  std::function<void(bool)> changed;
};

class PowerWatchTest : public ::testing::Test {
 protected:
  std::function<void(bool)> record() {
    return [this](bool on_battery) { seen.push_back(on_battery); };
  }
  EventLoop loop;
  FakeUPower upower;
  std::vector<bool> seen;
};

TEST_F(PowerWatchTest, WithoutTheBusThePowerSupplyClassSaysItAtOnce) {
  PowerWatch watch(loop, nullptr, fixture("power-on-battery"), record());
  EXPECT_EQ(seen, std::vector<bool>{true});
  EXPECT_EQ(watch.source(), PowerWatch::Source::PowerSupply);
}

TEST_F(PowerWatchTest, AMachineWithoutABatteryIsNeverOnBattery) {
  PowerWatch watch(loop, nullptr, fixture("power-desktop"), record());
  EXPECT_EQ(seen, std::vector<bool>{false});
}

TEST_F(PowerWatchTest, UPowerDecidesOnceItAnswersTheClassGivingTheFirstGuess) {
  PowerWatch watch(loop, &upower, fixture("power-on-ac"), record());
  EXPECT_EQ(seen, std::vector<bool>{false}) << "the class at once: no pass starts meanwhile";
  EXPECT_EQ(watch.source(), PowerWatch::Source::Unknown);
  upower.answer(true);
  EXPECT_EQ(seen, (std::vector<bool>{false, true}));
  EXPECT_EQ(watch.source(), PowerWatch::Source::UPower);
  ASSERT_TRUE(upower.changed);
  upower.changed(false);
  EXPECT_EQ(seen, (std::vector<bool>{false, true, false}));
}

TEST_F(PowerWatchTest, WithoutUPowerOnTheBusThePowerSupplyClassDecides) {
  PowerWatch watch(loop, &upower, fixture("power-on-battery"), record());
  upower.answer(std::nullopt);
  EXPECT_EQ(seen, (std::vector<bool>{true, true}));
  EXPECT_EQ(watch.source(), PowerWatch::Source::PowerSupply);
}

TEST_F(PowerWatchTest, AUPowerThatSpeaksUpLaterTakesOver) {
  PowerWatch watch(loop, &upower, fixture("power-on-battery"), record());
  upower.answer(std::nullopt);
  upower.changed(false);
  EXPECT_EQ(seen.back(), false);
  EXPECT_EQ(watch.source(), PowerWatch::Source::UPower);
}

}  // namespace
}  // namespace trimd
