// A command run as uid/gid 65534 (nobody) with no groups, through setpriv:
// how a test calls as a user who is not root.
#pragma once

#include <string>
#include <vector>

namespace trimd::test {

inline std::vector<std::string> as_nobody(std::vector<std::string> argv) {
  std::vector<std::string> full{"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                                "--"};
  full.insert(full.end(), argv.begin(), argv.end());
  return full;
}

}  // namespace trimd::test
