// The files trimd's policy is read from: trimd.toml, then its drop-ins, as
// systemd reads a unit's or a daemon's *.conf.d/ (trimd.toml(5), DROP-INS).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace trimd {

struct PolicySources {
  std::string main_file;
  bool main_required = false;  // --config FILE: a missing FILE is an error
  // Where drop-ins (*.toml) are looked for, lowest priority first. Of the
  // files with one name, the one in the last directory is read and masks the
  // others; a symbolic link to /dev/null there masks the name away.
  std::vector<std::string> drop_in_dirs;
};

// The default policy: `main_file`, then the drop-ins of the vendor, runtime
// and admin directories (/usr/lib/trimd/trimd.toml.d,
// /run/trimd/trimd.toml.d, /etc/trimd/trimd.toml.d for the packages).
PolicySources default_policy_sources(const std::string& main_file, const std::string& vendor_dir,
                                     const std::string& runtime_dir);
// `trimd --config FILE`: FILE, then FILE.d/*.toml.
PolicySources given_policy_sources(const std::string& file);

// More drop-ins than this, counted over all directories before masking, is
// an error: each is parsed on the event loop at every reload.
inline constexpr std::size_t kMaxDropIns = 128;

// The drop-ins to read, in merge order: by file name, whichever directory
// holds it. Throws ConfigError when a directory cannot be read or holds too
// many. A missing directory has none.
std::vector<std::string> list_drop_ins(const PolicySources& sources);

}  // namespace trimd
