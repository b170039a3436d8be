#include "system_view.hpp"

#include <spdlog/spdlog.h>

#include <fstream>
#include <sstream>

#include "mountinfo.hpp"

namespace trimd {

std::optional<std::string> read_text_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

SystemView::SystemView() = default;

Discovery SystemView::scan() {
  auto mountinfo = read_text_file("/proc/self/mountinfo");
  if (!mountinfo) {
    spdlog::error("cannot read /proc/self/mountinfo; is /proc mounted?");
    return {};
  }
  // fstab only adds opt-outs (X-trimd.skip): a missing one is normal.
  auto fstab = read_text_file("/etc/fstab").value_or("");
  return discover_filesystems(parse_mountinfo(*mountinfo), parse_fstab(fstab), inventory_, prober_);
}

std::vector<DiskStat> SystemView::diskstats() {
  auto text = read_text_file("/proc/diskstats");
  if (!text) {
    spdlog::warn("cannot read /proc/diskstats: disks cannot be seen idle");
    return {};
  }
  return parse_diskstats(*text);
}

}  // namespace trimd
