// Reading a file that someone else may have put there: trimd's config and
// state. Only a regular file is read, and only up to a cap; a FIFO or a device
// is refused at once instead of blocking on it or reading it for ever.
#pragma once

#include <sys/stat.h>

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

// Whether a symbolic link at `path` itself is followed. The admin's policy
// may be a link (configuration management does that); trimd's own state file
// never is, and a link there is somebody else's doing.
enum class Links { Follow, Refuse };

// The whole of `path`, or nothing when it does not exist. Throws
// FileRefused when it is not a regular file (after following a link with
// Links::Follow), is a link with Links::Refuse, is larger than `max_bytes`,
// or cannot be opened or read.
std::optional<std::string> read_regular_file(const std::string& path, std::size_t max_bytes,
                                             Links links = Links::Refuse);

// The same checks without reading, for a file another program reads (a key
// libcurl loads): `path` opened without blocking, its fstat() (mode, owner,
// size), or nothing when it does not exist. Throws FileRefused as above.
std::optional<struct stat> stat_regular_file(const std::string& path, Links links = Links::Refuse);

}  // namespace trimd
