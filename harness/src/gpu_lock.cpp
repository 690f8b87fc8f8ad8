#include "gpu_lock.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace kev {

namespace {

// A file name from a UUID or a PCI bus id: letters, digits and '-' kept, the rest '_'.
std::string fileKey(const std::string& key) {
    std::string out;
    for (char c : key) {
        const bool plain =
            (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
        out += plain ? c : '_';
    }
    return out;
}

// The folder, made private to this user; refused when someone else owns it or it is a link.
bool privateDir(const std::string& dir, std::string* error) {
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
        *error = "cannot create " + dir + ": " + std::strerror(errno);
        return false;
    }
    struct stat st = {};
    if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::getuid()) {
        *error = dir + " is not a folder of this user";
        return false;
    }
    return true;
}

} // namespace

GpuLock::~GpuLock() {
    release();
}

std::string GpuLock::defaultDir() {
    if (const char* d = std::getenv("KEVOLVE_LOCK_DIR"); d && *d)
        return d;
    if (const char* d = std::getenv("XDG_RUNTIME_DIR"); d && *d)
        return std::string(d) + "/kevolve";
    return "/tmp/kevolve-locks-" + std::to_string(::getuid());
}

bool GpuLock::tryAcquire(const std::string& dir, const std::string& key, int* holder,
                         std::string* error) {
    if (held())
        return true;
    *holder = 0;
    error->clear();
    if (!privateDir(dir, error))
        return false;
    const std::string path = dir + "/gpu-" + fileKey(key) + ".lock";
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
        *error = "cannot open " + path + ": " + std::strerror(errno);
        return false;
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        const int why = errno;
        if (why == EWOULDBLOCK) {
            char text[32] = {};
            if (::pread(fd, text, sizeof text - 1, 0) > 0)
                *holder = std::atoi(text);
        } else {
            *error = "cannot lock " + path + ": " + std::strerror(why);
        }
        ::close(fd);
        return false;
    }
    // The holder's pid, for the message of whoever waits.
    const std::string pid = std::to_string(::getpid()) + "\n";
    if (::ftruncate(fd, 0) == 0) {
        [[maybe_unused]] const ssize_t written = ::pwrite(fd, pid.data(), pid.size(), 0);
    }
    m_fd = fd;
    return true;
}

void GpuLock::release() {
    if (m_fd < 0)
        return;
    ::flock(m_fd, LOCK_UN);
    ::close(m_fd);
    m_fd = -1;
}

} // namespace kev
