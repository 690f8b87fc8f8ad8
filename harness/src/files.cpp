#include "files.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

namespace kev::files {

namespace {

const char* fileKind(mode_t mode) {
    if (S_ISDIR(mode))
        return "a directory";
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    if (S_ISSOCK(mode))
        return "a socket";
    return "not a plain file";
}

class Fd {
public:
    explicit Fd(int fd)
        : m_fd(fd) {}
    ~Fd() {
        if (m_fd >= 0)
            ::close(m_fd);
    }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    int get() const { return m_fd; }

private:
    int m_fd;
};

} // namespace

bool writeFile(const std::string& path, std::string_view data) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
    return static_cast<bool>(out);
}

std::string formatBytes(size_t bytes) {
    char buf[64];
    if (bytes >= (size_t{1} << 20) && bytes % (size_t{1} << 20) == 0)
        std::snprintf(buf, sizeof buf, "%zu MiB", bytes >> 20);
    else if (bytes >= (size_t{1} << 20))
        std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
    else
        std::snprintf(buf, sizeof buf, "%zu bytes", bytes);
    return buf;
}

std::optional<std::string> readRegularFile(const std::string& path, size_t maxBytes,
                                           std::string* reason) {
    const auto failed = [&](const std::string& why) -> std::optional<std::string> {
        if (reason)
            *reason = why;
        return std::nullopt;
    };
    if (path.empty())
        return failed("an empty path");
    // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever.
    const Fd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
    if (fd.get() < 0)
        return failed(errno == ENOENT ? std::string("no such file")
                                      : std::string("cannot open: ") + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0)
        return failed(std::string("cannot stat: ") + std::strerror(errno));
    if (!S_ISREG(st.st_mode))
        return failed(std::string(fileKind(st.st_mode)) + ", not a regular file");
    if (st.st_size < 0 || static_cast<unsigned long long>(st.st_size) > maxBytes)
        return failed(formatBytes(static_cast<size_t>(st.st_size)) + ", more than the limit of " +
                      formatBytes(maxBytes));
    std::string out;
    out.reserve(static_cast<size_t>(st.st_size));
    char chunk[65536];
    for (;;) {
        const ssize_t n = ::read(fd.get(), chunk, sizeof chunk);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n < 0)
            return failed(std::string("cannot read: ") + std::strerror(errno));
        if (n == 0)
            break;
        // The size can grow while it is read (or be reported as 0, as /proc's files are).
        if (out.size() + static_cast<size_t>(n) > maxBytes)
            return failed("more than the limit of " + formatBytes(maxBytes));
        out.append(chunk, static_cast<size_t>(n));
    }
    return out;
}

std::optional<std::string> readFile(const std::string& path, std::string* error) {
    std::string reason;
    auto text = readRegularFile(path, size_t{1} << 30, &reason);
    if (!text && error)
        *error = "cannot read " + path + ": " + reason;
    return text;
}

} // namespace kev::files
