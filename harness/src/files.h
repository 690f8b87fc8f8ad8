#pragma once
// Whole-file reads and writes shared by the supervisor, the protocol front ends, tasks and caches.
// Every read of a path that came from outside goes through readRegularFile: a FIFO would block the
// reader forever, /dev/zero would fill its memory, and a directory, /dev/null or /proc/self/mem
// would read as an empty file, so only regular files below a size limit are read.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace kev::files {

// Kernel sources and task files: far beyond any real one, small enough to hold many in memory.
inline constexpr size_t kMaxSourceBytes = size_t{16} << 20;
inline constexpr size_t kMaxTaskBytes = size_t{4} << 20;

// Writes `data` to `path` (truncating); false on any error.
bool writeFile(const std::string& path, std::string_view data);

// The contents of `path` when it is (or a symbolic link leads to) a regular file of at most
// `maxBytes` bytes. It is opened without blocking and its type checked on the open descriptor, so
// a FIFO, device, socket or directory is refused, never read. nullopt otherwise, with `reason`
// saying why without the path ("no such file", "a FIFO, not a regular file", "20 MiB, more than the
// limit of 16 MiB") for the caller to put after the path or field it names.
std::optional<std::string> readRegularFile(const std::string& path, size_t maxBytes,
                                           std::string* reason);

// readRegularFile with a limit of 1 GiB, for files this program wrote itself (libraries, caches);
// `error` reads "cannot read PATH: reason".
std::optional<std::string> readFile(const std::string& path, std::string* error);

// "1.5 MiB", "512 bytes": sizes in messages.
std::string formatBytes(size_t bytes);

} // namespace kev::files
