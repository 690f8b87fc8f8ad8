#include "capabilities.h"

#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace kev::gpu {

bool dropCapabilities(std::string* why) {
    // The bounding set first: dropping from it needs CAP_SETPCAP, which capset removes.
    for (int cap = 0; cap < 64; ++cap) {
        if (::prctl(PR_CAPBSET_READ, cap, 0, 0, 0) == 1) {
            ::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
        }
    }
    ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
    __user_cap_header_struct header{};
    header.version = _LINUX_CAPABILITY_VERSION_3;
    header.pid = 0;
    __user_cap_data_struct data[2] = {};
    if (::syscall(SYS_capset, &header, data) != 0) {
        *why = std::string("capset: ") + std::strerror(errno);
        return false;
    }
    __user_cap_data_struct now[2] = {};
    if (::syscall(SYS_capget, &header, now) != 0) {
        *why = std::string("capget: ") + std::strerror(errno);
        return false;
    }
    for (const __user_cap_data_struct& d : now) {
        if (d.effective || d.permitted || d.inheritable) {
            *why = "capabilities remain after capset";
            return false;
        }
    }
    return true;
}

} // namespace kev::gpu
