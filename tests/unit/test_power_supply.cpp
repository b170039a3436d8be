// On battery or not, from /sys/class/power_supply trees laid out as the
// kernel does (tests/data/sysfs/power-*, made by make_fixtures.py).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "file_test_kit.hpp"
#include "power_supply.hpp"

namespace trimd {
namespace {

namespace fs = std::filesystem;

PowerSource fixture(const std::string& name) {
  return read_power_source(fs::path(TRIMD_TEST_DATA) / "sysfs" / name / "class" / "power_supply");
}

TEST(PowerSupply, ALaptopOnItsMainsAdapterIsOnAc) {
  EXPECT_EQ(fixture("power-on-ac"), PowerSource::Ac);
}

TEST(PowerSupply, ALaptopWithItsAdapterOfflineAndItsBatteryDischargingIsOnBattery) {
  EXPECT_EQ(fixture("power-on-battery"), PowerSource::Battery);
}

TEST(PowerSupply, AUsbCChargerOnlineCountsAsAcWhateverTheBatterySays) {
  EXPECT_EQ(fixture("power-usb-c"), PowerSource::Ac);
}

TEST(PowerSupply, AMouseBatteryDoesNotMakeADesktopRunOnBattery) {
  EXPECT_EQ(fixture("power-desktop"), PowerSource::NoBattery);
}

TEST(PowerSupply, AMachineWithoutPowerSupplyClassHasNoBattery) {
  EXPECT_EQ(read_power_source("/nonexistent/class/power_supply"), PowerSource::NoBattery);
}

TEST(PowerSupply, ABatteryNotPresentIsNoBattery) {
  const test::ScratchDir dir("power-supply");
  const fs::path bat = dir.path() / "BAT1";
  fs::create_directories(bat);
  test::write_text(bat / "type", "Battery\n");
  test::write_text(bat / "present", "0\n");
  test::write_text(bat / "status", "Discharging\n");
  EXPECT_EQ(read_power_source(dir.path()), PowerSource::NoBattery);
}

}  // namespace
}  // namespace trimd
