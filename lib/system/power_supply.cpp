#include "power_supply.hpp"

#include <fstream>
#include <optional>
#include <string>
#include <system_error>

namespace trimd {

namespace fs = std::filesystem;

namespace {

// Each attribute is one short word; longer text is not the kernel's.
constexpr std::size_t kMaxAttributeBytes = 64;

std::optional<std::string> attribute(const fs::path& supply, const char* name) {
  std::ifstream in(supply / name);
  if (!in) return std::nullopt;
  std::string text(kMaxAttributeBytes, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  const auto end = text.find_first_of("\r\n");
  if (end != std::string::npos) text.resize(end);
  return text;
}

bool is_line_power(const std::string& type) {
  return type == "Mains" || type == "USB" || type.starts_with("USB_");
}

}  // namespace

const char* to_string(PowerSource source) {
  switch (source) {
    case PowerSource::Ac: return "ac";
    case PowerSource::Battery: return "battery";
    case PowerSource::NoBattery: return "no-battery";
  }
  return "ac";
}

PowerSource read_power_source(const fs::path& dir) {
  bool battery = false;
  bool discharging = false;
  std::error_code error;
  int seen = 0;
  for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
    if (++seen > kMaxPowerSupplies) break;
    const fs::path supply = it->path();
    const auto type = attribute(supply, "type");
    if (!type) continue;
    if (is_line_power(*type)) {
      if (attribute(supply, "online") == "1") return PowerSource::Ac;
      continue;
    }
    if (*type != "Battery" || attribute(supply, "scope") == "Device" ||
        attribute(supply, "present") == "0")
      continue;
    battery = true;
    if (attribute(supply, "status") == "Discharging") discharging = true;
  }
  if (!battery) return PowerSource::NoBattery;
  return discharging ? PowerSource::Battery : PowerSource::Ac;
}

}  // namespace trimd
