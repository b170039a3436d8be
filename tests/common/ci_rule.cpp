#include "ci_rule.hpp"

#include <cstdlib>
#include <string_view>

namespace trimd::test {

bool running_under_ci() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::string_view(ci) == "true";
}

}  // namespace trimd::test
