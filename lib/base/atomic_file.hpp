// Replacing a file whole, so that a reader sees the old content or the new
// one and a crash leaves no half-written file: trimd's state and its metrics.
// The directory may be writable by others (node_exporter's textfile
// directory often is): nothing here opens a name someone else can predict,
// so a FIFO, link or device put there can neither block trimd nor be
// written through.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string_view>

namespace trimd {

// Writes `text` to an unnamed file in `file`'s directory (O_TMPFILE; where
// the filesystem lacks it, a new file under a random name created with
// O_EXCL), syncs it, gives it `mode` whatever the umask, links it in under
// a random name and renames that over `file`, then syncs the directory.
// Throws std::system_error and leaves nothing behind on failure. Never
// blocks on anything but the disk.
// How the new file starts: Unnamed tries O_TMPFILE first; Named goes
// straight to the random name (what a filesystem without O_TMPFILE gets;
// tests use it to cover that path on any filesystem).
enum class TempFileKind { Unnamed, Named };

void replace_file_atomically(const std::filesystem::path& file, std::string_view text,
                             mode_t mode = 0644, TempFileKind kind = TempFileKind::Unnamed);

}  // namespace trimd
