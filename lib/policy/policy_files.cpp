// Finding trimd.toml's drop-ins: *.toml in each directory, merged by file
// name across them as systemd merges *.conf.d/ (the later directory masks
// the earlier ones, a link to /dev/null masks the name away).
#include "policy_files.hpp"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "config.hpp"

namespace trimd {
namespace {

// systemd's rule: a name whose file is /dev/null is masked.
bool is_masked(const std::string& path) {
  struct stat link {
  }, target{};
  if (::lstat(path.c_str(), &link) != 0 || !S_ISLNK(link.st_mode)) return false;
  return ::stat(path.c_str(), &target) == 0 && S_ISCHR(target.st_mode) &&
         target.st_rdev == makedev(1, 3);
}

bool is_drop_in_name(const std::string& name) {
  return name.size() > 5 && name.front() != '.' && name.ends_with(".toml");
}

// Each drop-in name of `dir` with its path, or nothing where it is masked.
// `seen` counts the drop-ins of every directory so far, against the bound.
void add_drop_ins(const std::string& dir, std::map<std::string, std::optional<std::string>>& out,
                  std::size_t& seen) {
  std::error_code error;
  std::filesystem::directory_iterator entries(dir, error);
  if (error == std::errc::no_such_file_or_directory) return;
  for (; !error && entries != std::filesystem::directory_iterator{}; entries.increment(error)) {
    const std::string name = entries->path().filename().string();
    if (!is_drop_in_name(name)) continue;
    if (++seen > kMaxDropIns)
      throw ConfigError(dir, 0, 0,
                        fmt::format("more than {} drop-ins (*.toml) in the policy's drop-in "
                                    "directories; trimd reads at most {}",
                                    kMaxDropIns, kMaxDropIns));
    const std::string path = entries->path().string();
    out[name] = is_masked(path) ? std::nullopt : std::optional<std::string>(path);
  }
  if (error) throw ConfigError(dir, 0, 0, fmt::format("cannot read: {}", error.message()));
}

}  // namespace

PolicySources default_policy_sources(const std::string& main_file, const std::string& vendor_dir,
                                     const std::string& runtime_dir) {
  return {main_file, false, {vendor_dir, runtime_dir, main_file + ".d"}};
}

PolicySources given_policy_sources(const std::string& file) { return {file, true, {file + ".d"}}; }

std::vector<std::string> list_drop_ins(const PolicySources& sources) {
  std::map<std::string, std::optional<std::string>> by_name;  // sorted: the merge order
  std::size_t seen = 0;
  for (const auto& dir : sources.drop_in_dirs) add_drop_ins(dir, by_name, seen);
  std::vector<std::string> files;
  for (const auto& [name, path] : by_name)
    if (path) files.push_back(*path);
  return files;
}

}  // namespace trimd
