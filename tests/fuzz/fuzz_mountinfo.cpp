// libFuzzer: /proc/self/mountinfo and fstab text, as the kernel or an admin
// might write them, and the octal unescaping both use.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "mountinfo.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  for (const auto& mount : trimd::parse_mountinfo(text)) (void)mount.has_option("discard");
  (void)trimd::parse_fstab(text);
  (void)trimd::unescape_octal(text);
  return 0;
}
