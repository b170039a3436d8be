// libFuzzer: what a D-Bus caller may send as mount points, split into a
// list at NUL bytes, through the checks a call runs (sizes before polkit,
// the rest once it is authorized), resolved against a manager that tracks
// a Latin-1 mount point and its lookalike; and the one escaping of names
// that are not UTF-8 (lib/base/utf8.hpp), which must round-trip any bytes.
// InvalidArgument is the expected answer to bad input, NotFound to a path
// nobody mounted; the work must stay linear in the input (libFuzzer's
// -timeout catches anything worse).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <sdbus-c++/Error.h>

#include "bus_mount_points.hpp"
#include "bus_names.hpp"
#include "manager.hpp"
#include "utf8.hpp"

namespace {

void check_escaping(const std::string& input) {
  const std::string escaped = trimd::escape_bytes(input);
  const std::string line = trimd::escape_bytes_for_line(input);
  if (!trimd::is_valid_utf8(escaped) || !trimd::is_valid_utf8(line)) __builtin_trap();
  if (trimd::unescape_bytes(escaped) != input || trimd::unescape_bytes(line) != input)
    __builtin_trap();
  for (const char c : line)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) __builtin_trap();
  if (const auto raw = trimd::unescape_bytes(input))
    if (trimd::unescape_bytes(trimd::escape_bytes(*raw)) != *raw) __builtin_trap();
}

const trimd::Manager& manager_with_odd_names() {
  static const trimd::Manager* manager = [] {
    auto* m = new trimd::Manager(trimd::Config{}, trimd::StateMap{}, trimd::Clock::now());
    std::vector<trimd::DiscoveredFs> found(3);
    found[0].id = "latin1";
    found[0].mount.mount_point = "/srv/caf\xe9";
    found[1].id = "lookalike";
    found[1].mount.mount_point = "/srv/caf\\xe9";
    found[2].id = "root";
    found[2].mount.mount_point = "/";
    m->update_filesystems(found, trimd::Clock::now());
    return m;
  }();
  return *manager;
}

void check_resolving(const std::vector<std::string>& paths) {
  const auto nothing = [](const std::string&) { return trimd::bus::UntrackedPath{}; };
  try {
    const auto ids = trimd::bus::ids_for_mount_points(manager_with_odd_names(), paths, nothing);
    if (ids.size() != paths.size()) __builtin_trap();
  } catch (const sdbus::Error& e) {
    if (e.getName() != "org.trimd.trimd1.Error.InvalidArgument" &&
        e.getName() != "org.trimd.trimd1.Error.NotFound")
      __builtin_trap();
    if (!trimd::is_valid_utf8(e.getMessage())) __builtin_trap();
  }
}

}  // namespace

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
      if (path.size() > trimd::bus::kMaxPathBytes) continue;
      const std::string normal = trimd::bus::normalize_mount_point(path);
      // The normal form is absolute, has no empty, "." or ".." segment and
      // normalizes to itself.
      if (normal.empty() || normal.front() != '/' || normal.find("//") != std::string::npos ||
          trimd::bus::normalize_mount_point(normal) != normal)
        __builtin_trap();
    }
    check_resolving(paths);
  } catch (const sdbus::Error& e) {
    if (e.getName() != "org.trimd.trimd1.Error.InvalidArgument") __builtin_trap();
  }
  check_escaping(input);
  if (trimd::bus::raw_from_bus_string(trimd::bus::bus_string(input)) != input) __builtin_trap();
  if (trimd::bus::unescape_path_element(trimd::bus::escape_path_element(input)) != input)
    __builtin_trap();
  return 0;
}
