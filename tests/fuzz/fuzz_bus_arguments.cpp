// libFuzzer: what a D-Bus caller may send as mount points, split into a
// list at NUL bytes, through the checks a call runs once it is authorized.
// InvalidArgument is the expected answer to bad input; the work must stay
// linear in the input (libFuzzer's -timeout catches anything worse).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <sdbus-c++/Error.h>

#include "bus_mount_points.hpp"
#include "bus_names.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> paths;
  std::size_t begin = 0;
  for (std::size_t end; (end = input.find('\0', begin)) != std::string::npos; begin = end + 1)
    paths.push_back(input.substr(begin, end - begin));
  paths.push_back(input.substr(begin));
  try {
    trimd::bus::check_mount_point_list(paths);
    for (const auto& path : paths) {
      const std::string normal = trimd::bus::normalize_mount_point(path);
      // The normal form is absolute, has no empty, "." or ".." segment and
      // normalizes to itself.
      if (normal.empty() || normal.front() != '/' || normal.find("//") != std::string::npos ||
          trimd::bus::normalize_mount_point(normal) != normal)
        __builtin_trap();
    }
  } catch (const sdbus::Error& e) {
    if (e.getName() != "org.trimd.trimd1.Error.InvalidArgument") __builtin_trap();
  }
  (void)trimd::bus::bus_string(input);
  if (trimd::bus::unescape_path_element(trimd::bus::escape_path_element(input)) != input)
    __builtin_trap();
  return 0;
}
