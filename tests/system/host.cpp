// What the host offers: prerequisites, the mount and loop tables.
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <sstream>

#include "find_program.hpp"
#include "loopfs.hpp"

namespace trimd::test {

namespace {

std::string join(const std::vector<std::string>& words) {
  std::string line;
  for (const auto& word : words) line += (line.empty() ? "" : " ") + word;
  return line;
}

}  // namespace

std::optional<std::string> missing_root() {
  if (::geteuid() != 0) return "needs root (loop devices, mount, FITRIM)";
  if (::access("/dev/loop-control", R_OK | W_OK) != 0) return "needs /dev/loop-control";
  return std::nullopt;
}

std::optional<std::string> missing_tools(const std::vector<std::string>& tools) {
  std::vector<std::string> missing;
  std::copy_if(tools.begin(), tools.end(), std::back_inserter(missing),
               [](const std::string& tool) { return !find_program(tool); });
  if (missing.empty()) return std::nullopt;
  return "missing tools: " + join(missing);
}

// Compares the raw field: fine for the kit's own paths, which have no spaces to escape.
bool is_mounted(const std::string& mount_point) {
  std::ifstream mountinfo("/proc/self/mountinfo");
  for (std::string line; std::getline(mountinfo, line);) {
    std::istringstream fields(line);
    std::string id, parent, devnum, root, target;
    fields >> id >> parent >> devnum >> root >> target;
    if (target == mount_point) return true;
  }
  return false;
}

bool is_attached(const std::string& backing_file) {
  return run_or_throw({"losetup", "-a"}).find(backing_file) != std::string::npos;
}

}  // namespace trimd::test
