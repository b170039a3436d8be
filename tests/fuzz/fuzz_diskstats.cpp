// libFuzzer: /proc/diskstats text of any kernel version.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "diskstats.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  (void)trimd::parse_diskstats(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
