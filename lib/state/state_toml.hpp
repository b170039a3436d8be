// The TOML form of one filesystem's record in state.toml, both ways.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "state_store.hpp"

namespace trimd {

// One record as it stands in the file, a blank line and its table header
// before it.
std::string format_record(const std::string& id, const FsRecord& record);

}  // namespace trimd
