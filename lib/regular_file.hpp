// Reading a file that someone else may have put there: trimd's config and
// state. Only a regular file is read, and only up to a cap; a FIFO, a device
// or a symbolic link is refused at once instead of blocking or following it.
#pragma once

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>

namespace trimd {

// Config and state files are a few KiB; this is generous.
inline constexpr std::size_t kMaxPolicyFileBytes = 4u << 20;

// Why a file was not read ("is a FIFO, not a regular file", ...).
class FileRefused : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The whole of `path`, or nothing when it does not exist. Throws
// FileRefused when it is not a regular file, is a symbolic link, is larger
// than `max_bytes`, or cannot be opened or read.
std::optional<std::string> read_regular_file(const std::string& path, std::size_t max_bytes);

}  // namespace trimd
