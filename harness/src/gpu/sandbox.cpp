#include "sandbox.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>

namespace kev::gpu::sandbox {

bool install(std::string* why) {
#if defined(__x86_64__)
    // The BPF program reads struct seccomp_data: arch, nr, then args[0] for clone's flags.
    constexpr unsigned kArch = offsetof(struct seccomp_data, arch);
    constexpr unsigned kNr = offsetof(struct seccomp_data, nr);
    constexpr unsigned kArg0 = offsetof(struct seccomp_data, args[0]);
    constexpr unsigned kKill = SECCOMP_RET_KILL_PROCESS;
    constexpr unsigned kAllow = SECCOMP_RET_ALLOW;
    constexpr unsigned kEperm = SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA);
    constexpr unsigned kEnosys = SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA);
    // clang-format off
    struct sock_filter program[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kArch),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, kKill),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kNr),
        // x32 system calls would bypass the numbers below.
        BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, kKill),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_fork, 11, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_vfork, 10, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_execve, 9, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_execveat, 8, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_ptrace, 7, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_vm_readv, 6, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_vm_writev, 5, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_socket, 5, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_socketpair, 4, 0),
        // glibc falls back from clone3 to clone, whose flags a filter can read.
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 4, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 4, 0),
        BPF_STMT(BPF_RET | BPF_K, kAllow),
        BPF_STMT(BPF_RET | BPF_K, kKill),    // fork .. process_vm_writev
        BPF_STMT(BPF_RET | BPF_K, kEperm),   // socket, socketpair
        BPF_STMT(BPF_RET | BPF_K, kEnosys),  // clone3
        // clone: a thread (CLONE_THREAD) is allowed, anything else is a new process.
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kArg0),
        BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, kAllow),
        BPF_STMT(BPF_RET | BPF_K, kKill),
    };
    // clang-format on
    struct sock_fprog fprog;
    fprog.len = static_cast<unsigned short>(sizeof(program) / sizeof(program[0]));
    fprog.filter = program;
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
        *why = std::string("prctl(PR_SET_NO_NEW_PRIVS) failed: ") + std::strerror(errno);
        return false;
    }
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fprog) != 0) {
        *why = std::string("seccomp(SECCOMP_SET_MODE_FILTER) failed: ") + std::strerror(errno);
        return false;
    }
    return true;
#else
    *why = "seccomp filter is only written for x86-64";
    return false;
#endif
}

} // namespace kev::gpu::sandbox
