#include "bus_upower.hpp"

#include <sdbus-c++/Error.h>
#include <sdbus-c++/Message.h>
#include <sdbus-c++/Types.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace trimd::bus {

namespace {

constexpr const char* kUPowerName = "org.freedesktop.UPower";
constexpr const char* kUPowerPath = "/org/freedesktop/UPower";
constexpr const char* kUPowerInterface = "org.freedesktop.UPower";
constexpr const char* kProperties = "org.freedesktop.DBus.Properties";
constexpr const char* kOnBattery = "OnBattery";
constexpr std::uint64_t kGetTimeoutUsec = 10'000'000;

}  // namespace

BusUPower::BusUPower(EventLoop& loop, BusConnection& connection)
    : connection_(connection),
      proxy_(sdbus::createProxy(connection.get(), kUPowerName, kUPowerPath)), later_(loop, [this] {
        if (auto answer = std::exchange(answer_later_, {})) answer();
      }) {
  proxy_->registerSignalHandler(kProperties, "PropertiesChanged",
                                [this](sdbus::Signal& message) { properties_changed(message); });
  proxy_->finishRegistration();
  connection_.dispatch_soon();
}

BusUPower::~BusUPower() = default;

void BusUPower::properties_changed(sdbus::Signal& message) {
  std::string interface;
  std::map<std::string, sdbus::Variant> changed;
  std::vector<std::string> invalidated;
  try {
    message >> interface >> changed >> invalidated;
    if (interface != kUPowerInterface) return;
    if (auto it = changed.find(kOnBattery); it != changed.end()) {
      if (changed_) changed_(it->second.get<bool>());
    } else if (std::find(invalidated.begin(), invalidated.end(), kOnBattery) != invalidated.end()) {
      read_on_battery([this](std::optional<bool> on_battery) {
        if (on_battery && changed_) changed_(*on_battery);
      });
    }
  } catch (const sdbus::Error& e) {
    spdlog::warn("UPower: a PropertiesChanged trimd cannot read: {}", e.what());
  }
}

void BusUPower::read_on_battery(std::function<void(std::optional<bool>)> done) {
  try {
    auto call = proxy_->createMethodCall(kProperties, "Get");
    call << std::string(kUPowerInterface) << std::string(kOnBattery);
    proxy_->callMethod(
        call,
        [done](sdbus::MethodReply& reply, const sdbus::Error* error) {
          if (error) {
            spdlog::debug("UPower: no OnBattery ({})", error->getName());
            return done(std::nullopt);
          }
          try {
            sdbus::Variant value;
            reply >> value;
            done(value.get<bool>());
          } catch (const sdbus::Error& e) {
            spdlog::warn("UPower: OnBattery is not a boolean: {}", e.what());
            done(std::nullopt);
          }
        },
        kGetTimeoutUsec);
    connection_.dispatch_soon();
  } catch (const sdbus::Error&) {
    answer_later_ = [done] { done(std::nullopt); };
    later_.arm_in(Duration{1});
  }
}

}  // namespace trimd::bus
