// Where a program is, the way exec would find it.
#pragma once

#include <optional>
#include <string>

namespace trimd::test {

// `name` searched in $PATH (a name with a '/' is taken as it is): its path
// when it is there and executable, else nothing.
std::optional<std::string> find_program(const std::string& name);

}  // namespace trimd::test
