#include "capabilities.h"

#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace kev::gpu {

bool dropCapabilities(std::string* why, int keep) {
    // The bounding set first: dropping from it needs CAP_SETPCAP, which capset removes.
    for (int cap = 0; cap < 64; ++cap) {
        if (cap != keep && ::prctl(PR_CAPBSET_READ, cap, 0, 0, 0) == 1) {
            ::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
        }
    }
    ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
    __user_cap_header_struct header{};
    header.version = _LINUX_CAPABILITY_VERSION_3;
    header.pid = 0;
    __user_cap_data_struct data[2] = {};
    if (keep >= 0 && keep < 64) {
        __user_cap_data_struct have[2] = {};
        if (::syscall(SYS_capget, &header, have) == 0 &&
            (have[keep / 32].permitted & (1u << (keep % 32)))) {
            data[keep / 32].effective = data[keep / 32].permitted = 1u << (keep % 32);
        }
    }
    if (::syscall(SYS_capset, &header, data) != 0) {
        *why = std::string("capset: ") + std::strerror(errno);
        return false;
    }
    __user_cap_data_struct now[2] = {};
    if (::syscall(SYS_capget, &header, now) != 0) {
        *why = std::string("capget: ") + std::strerror(errno);
        return false;
    }
    for (int i = 0; i < 2; ++i) {
        const __u32 allowed = keep >= 0 && keep / 32 == i ? 1u << (keep % 32) : 0u;
        if ((now[i].effective | now[i].permitted | now[i].inheritable) & ~allowed) {
            *why = "capabilities remain after capset";
            return false;
        }
    }
    return true;
}

} // namespace kev::gpu
