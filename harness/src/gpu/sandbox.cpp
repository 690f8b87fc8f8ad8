#include "sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <dirent.h>
#include <vector>

namespace kev::gpu::sandbox {

namespace {

std::string errnoText(const char* what) {
    return std::string(what) + ": " + std::strerror(errno);
}

// Landlock's user-space ABI, spelled out: the build host's <linux/landlock.h> may be older than
// the kernel the harness runs on, and the rights are probed at run time.
constexpr uint64_t kFsWriteFile = 1ull << 1;
constexpr uint64_t kFsReadFile = 1ull << 2;
constexpr uint64_t kFsReadDir = 1ull << 3;
constexpr uint64_t kFsRemoveDir = 1ull << 4;
constexpr uint64_t kFsRemoveFile = 1ull << 5;
constexpr uint64_t kFsMakeChar = 1ull << 6;
constexpr uint64_t kFsMakeDir = 1ull << 7;
constexpr uint64_t kFsMakeReg = 1ull << 8;
constexpr uint64_t kFsMakeSock = 1ull << 9;
constexpr uint64_t kFsMakeFifo = 1ull << 10;
constexpr uint64_t kFsMakeBlock = 1ull << 11;
constexpr uint64_t kFsMakeSym = 1ull << 12;
constexpr uint64_t kFsRefer = 1ull << 13;    // ABI 2
constexpr uint64_t kFsTruncate = 1ull << 14; // ABI 3
constexpr uint64_t kNetBindTcp = 1ull << 0;  // ABI 4
constexpr uint64_t kNetConnectTcp = 1ull << 1;
constexpr uint64_t kScopeAbstractUnixSocket = 1ull << 0; // ABI 6
constexpr uint64_t kScopeSignal = 1ull << 1;
constexpr uint32_t kCreateRulesetVersion = 1u << 0;
constexpr int kRulePathBeneath = 1;

struct RulesetAttr {
    uint64_t handledAccessFs;
    uint64_t handledAccessNet;
    uint64_t scoped;
};

struct __attribute__((packed)) PathBeneathAttr {
    uint64_t allowedAccess;
    int32_t parentFd;
};

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif

bool addPath(int ruleset, const std::string& path, uint64_t access, std::string* why) {
    const int fd = ::open(path.c_str(), O_PATH | O_CLOEXEC);
    if (fd < 0) {
        *why = errnoText(("open " + path).c_str());
        return false;
    }
    // A rule on a file may carry only the rights that apply to files.
    struct stat st {};
    if (::fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode))
        access &= kFsWriteFile | kFsReadFile | kFsTruncate;
    PathBeneathAttr attr{access, fd};
    const long rc = ::syscall(SYS_landlock_add_rule, ruleset, kRulePathBeneath, &attr, 0);
    const int err = errno;
    ::close(fd);
    if (rc != 0) {
        errno = err;
        *why = errnoText(("landlock_add_rule " + path).c_str());
        return false;
    }
    return true;
}

// The device files CUDA opens read-write after set-up (new contexts, UVM, MIG capabilities).
std::vector<std::string> deviceFiles() {
    std::vector<std::string> files = {"/dev/null"};
    if (DIR* dir = ::opendir("/dev")) {
        while (const dirent* e = ::readdir(dir)) {
            const std::string name = e->d_name;
            // nvidia0.., nvidiactl, nvidia-uvm(-tools), nvidia-modeset, and the nvidia-caps
            // folder of MIG capabilities (a rule beneath it).
            if (name.rfind("nvidia", 0) == 0)
                files.push_back("/dev/" + name);
        }
        ::closedir(dir);
    }
    return files;
}

// What the process may read: everything but other processes' /proc entries (a root candidate could
// otherwise read the verifier's or the supervisor's memory, environment and descriptors). Every
// entry of / but /proc, this process's own /proc/<pid> (what /proc/self and /proc/thread-self
// lead to), and the system-wide /proc files the C library and the CUDA driver read.
std::vector<std::string> readRoots() {
    std::vector<std::string> roots;
    if (DIR* dir = ::opendir("/")) {
        while (const dirent* e = ::readdir(dir)) {
            const std::string name = e->d_name;
            if (name != "." && name != ".." && name != "proc")
                roots.push_back("/" + name);
        }
        ::closedir(dir);
    }
    roots.push_back("/proc/" + std::to_string(::getpid()));
    for (const char* p : {"driver", "sys", "meminfo", "cpuinfo", "stat", "filesystems", "loadavg",
                          "uptime", "version", "modules", "devices", "interrupts", "swaps",
                          "zoneinfo", "vmstat", "buddyinfo", "pressure"})
        roots.push_back(std::string("/proc/") + p);
    return roots;
}

#if defined(__x86_64__)
// A classic BPF program with symbolic jump targets, resolved when it is built.
class Program {
public:
    size_t size() const { return m_code.size(); }
    void stmt(uint16_t code, uint32_t k) { m_code.push_back(BPF_STMT(code, k)); }
    // Jumps to `label` when the accumulator equals k, else falls through.
    void jeqTo(uint32_t k, int label) {
        m_fixups.push_back({m_code.size(), label});
        m_code.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, k, 0, 0));
    }
    void place(int label) {
        if (static_cast<size_t>(label) >= m_labels.size())
            m_labels.resize(static_cast<size_t>(label) + 1, 0);
        m_labels[static_cast<size_t>(label)] = m_code.size();
    }
    std::vector<sock_filter> build() {
        // Every target lies ahead of its jump (classic BPF has no backward jumps).
        for (const auto& [at, label] : m_fixups) {
            const size_t target = m_labels.at(static_cast<size_t>(label));
            // A backward or overlong jump would make the kernel refuse the whole filter.
            if (target <= at || target - at - 1 > 255)
                return {};
            m_code[at].jt = static_cast<uint8_t>(target - at - 1);
        }
        return m_code;
    }

private:
    std::vector<sock_filter> m_code;
    std::vector<std::pair<size_t, int>> m_fixups;
    std::vector<size_t> m_labels;
};
#endif

} // namespace

std::string Report::evidence() const {
    std::string s = !capabilitiesDropped ? "capabilities not dropped (" + capabilitiesWhy + "); "
                    : keptCapability >= 0
                        ? "no capabilities but " + std::to_string(keptCapability) + "; "
                        : "no capabilities; ";
    if (seccomp)
        s += std::string("seccomp filter installed before the candidate was loaded") +
             (seccompAllThreads ? " on every thread" : " on the loading thread") +
             " (no fork, exec, ptrace, process-group changes, pidfds, or signals to other "
             "processes)";
    else
        s += "seccomp filter not installed: " + seccompWhy;
    if (seccompRefusesWrites)
        s += "; no file may be created, changed or removed (the filter's fallback without "
             "Landlock)";
    if (landlock)
        s += "; Landlock ABI " + std::to_string(landlockAbi) + " active: writable only " + writable;
    else if (landlockAbi > 0)
        s += "; Landlock ABI " + std::to_string(landlockAbi) + " not active: " + landlockWhy;
    else
        s += "; Landlock not active: " + landlockWhy;
    return s;
}

void installLandlock(const Options& options, Report& report) {
    const long abi = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, kCreateRulesetVersion);
    if (abi < 1) {
        report.landlockWhy = errno == EOPNOTSUPP ? "Landlock is disabled in this kernel"
                                                 : "this kernel has no Landlock (" +
                                                       std::string(std::strerror(errno)) + ")";
        return;
    }
    report.landlockAbi = static_cast<int>(abi);
    // KEVOLVE_SANDBOX_READS=all (the operator's diagnostic) leaves reads unrestricted.
    const char* reads = std::getenv("KEVOLVE_SANDBOX_READS");
    const bool limitReads = !(reads && std::string(reads) == "all");
    uint64_t fs = kFsWriteFile | kFsRemoveDir | kFsRemoveFile | kFsMakeChar | kFsMakeDir |
                  kFsMakeReg | kFsMakeSock | kFsMakeFifo | kFsMakeBlock | kFsMakeSym;
    if (limitReads)
        fs |= kFsReadFile | kFsReadDir;
    if (abi >= 2)
        fs |= kFsRefer;
    if (abi >= 3)
        fs |= kFsTruncate;
    RulesetAttr attr{fs, abi >= 4 ? (kNetBindTcp | kNetConnectTcp) : 0,
                     abi >= 6 ? (kScopeAbstractUnixSocket | kScopeSignal) : 0};
    // Older kernels take the attribute only up to the fields they know.
    const size_t attrSize = abi >= 6   ? sizeof attr
                            : abi >= 4 ? offsetof(RulesetAttr, scoped)
                                       : offsetof(RulesetAttr, handledAccessNet);
    const long ruleset = ::syscall(SYS_landlock_create_ruleset, &attr, attrSize, 0u);
    if (ruleset < 0) {
        report.landlockWhy = errnoText("landlock_create_ruleset");
        return;
    }
    const int rs = static_cast<int>(ruleset);
    std::string why;
    bool ok = true;
    if (!options.scratchDir.empty()) {
        ok = addPath(rs, options.scratchDir, fs, &why);
        report.writable = "beneath " + options.scratchDir;
    } else {
        report.writable = "no folder";
    }
    int devices = 0;
    for (const std::string& dev : deviceFiles()) {
        // A device file that vanished since the listing is no reason to give up the sandbox.
        std::string ignored;
        if (ok && addPath(rs, dev, kFsWriteFile, &ignored))
            ++devices;
    }
    report.writable += " and " + std::to_string(devices) + " device files (NVIDIA, /dev/null)";
    if (limitReads) {
        int readable = 0;
        for (const std::string& root : readRoots()) {
            // Not every system has every /proc file; a missing one is no reason to give up.
            std::string ignored;
            if (ok && addPath(rs, root, kFsReadFile | kFsReadDir, &ignored))
                ++readable;
        }
        report.writable += "; readable: " + std::to_string(readable) +
                           " roots, not other processes' /proc entries";
    } else {
        report.writable += "; reads not limited (KEVOLVE_SANDBOX_READS=all)";
    }
    if (ok && ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
        why = errnoText("prctl(PR_SET_NO_NEW_PRIVS)");
        ok = false;
    }
    if (ok && ::syscall(SYS_landlock_restrict_self, rs, 0u) != 0) {
        why = errnoText("landlock_restrict_self");
        ok = false;
    }
    ::close(rs);
    report.landlock = ok;
    if (!ok)
        report.landlockWhy = why;
    else if (abi >= 6)
        report.writable += "; no signals or abstract sockets outside the sandbox";
}

bool dropCapabilities(std::string* why, int keep) {
    // The bounding set first (that needs CAP_SETPCAP, still held), then the ambient set, then the
    // effective, permitted and inheritable sets: a root child keeps no CAP_SYS_PTRACE (reading a
    // non-dumpable process's memory), no CAP_DAC_OVERRIDE, nothing.
    int last = CAP_LAST_CAP;
    if (FILE* f = std::fopen("/proc/sys/kernel/cap_last_cap", "r")) {
        if (std::fscanf(f, "%d", &last) != 1)
            last = CAP_LAST_CAP;
        std::fclose(f);
    }
    for (int cap = 0; cap <= last; ++cap) {
        if (cap != keep && ::prctl(PR_CAPBSET_READ, cap, 0, 0, 0) == 1 &&
            ::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0) {
            *why = errnoText(("PR_CAPBSET_DROP " + std::to_string(cap)).c_str());
            return false;
        }
    }
    if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) {
        *why = errnoText("PR_CAP_AMBIENT_CLEAR_ALL");
        return false;
    }
    struct __user_cap_header_struct header {};
    header.version = _LINUX_CAPABILITY_VERSION_3;
    header.pid = 0;
    struct __user_cap_data_struct data[2] = {};
    if (keep >= 0 && keep < 64) {
        struct __user_cap_data_struct have[2] = {};
        const uint32_t bit = 1u << (keep % 32);
        if (::syscall(SYS_capget, &header, have) == 0 && (have[keep / 32].permitted & bit))
            data[keep / 32].effective = data[keep / 32].permitted = bit;
    }
    if (::syscall(SYS_capset, &header, data) != 0) {
        *why = errnoText("capset");
        return false;
    }
    struct __user_cap_data_struct now[2] = {};
    if (::syscall(SYS_capget, &header, now) != 0) {
        *why = errnoText("capget");
        return false;
    }
    for (int i = 0; i < 2; ++i) {
        const uint32_t allowed = keep >= 0 && keep / 32 == i ? 1u << (keep % 32) : 0u;
        if ((now[i].effective | now[i].permitted | now[i].inheritable) & ~allowed) {
            *why = "capabilities remain after capset";
            return false;
        }
    }
    return true;
}

Report install(const Options& options) {
    Report report;
    if (options.dropCapabilities) {
        report.capabilitiesDropped =
            dropCapabilities(&report.capabilitiesWhy, options.keepCapability);
        report.keptCapability = options.keepCapability;
    } else {
        report.capabilitiesWhy = "left to the caller";
    }
    // Not dumpable: another process of the same user (a concurrent candidate on another device)
    // cannot open this one's /proc/<pid>/mem even where Landlock is missing.
    ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    if (options.landlock)
        installLandlock(options, report);
    else
        report.landlockWhy = "not asked for";
#if defined(__x86_64__)
    // The BPF program reads struct seccomp_data: arch, nr, then args[0] (clone's flags, the pid
    // of a signal; its low 32 bits, which is all of a pid_t on this little-endian ABI).
    constexpr unsigned kArch = offsetof(struct seccomp_data, arch);
    constexpr unsigned kNr = offsetof(struct seccomp_data, nr);
    constexpr unsigned kArg0 = offsetof(struct seccomp_data, args[0]);
    constexpr unsigned kArg1 = offsetof(struct seccomp_data, args[1]);
    constexpr unsigned kArg2 = offsetof(struct seccomp_data, args[2]);
    constexpr unsigned kKill = SECCOMP_RET_KILL_PROCESS;
    constexpr unsigned kAllow = SECCOMP_RET_ALLOW;
    constexpr unsigned kEperm = SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA);
    constexpr unsigned kEnosys = SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA);
    constexpr unsigned kEacces = SECCOMP_RET_ERRNO | (EACCES & SECCOMP_RET_DATA);
    // O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND: an open that may change a file.
    constexpr uint32_t kWritingOpen = 01 | 02 | 0100 | 01000 | 02000;
    enum Label {
        LKill,
        LEperm,
        LEnosys,
        LClone,
        LSelf,
        LArchOk,
        LNativeNr,
        LSelfOk,
        LCloneKill,
        LOwnKill,
        LOwnEperm,
        LPriority,
        LIoprio,
        LPriorityWho,
        LFcntl,
        LFcntlOwner,
        LIoctl,
        LLocalDeny,
        LOpen,
        LOpenat,
        LNoWrite,
        LAllowTail
    };
    const uint32_t self = static_cast<uint32_t>(::getpid());
    Program p;
    p.stmt(BPF_LD | BPF_W | BPF_ABS, kArch);
    p.jeqTo(AUDIT_ARCH_X86_64, LArchOk);
    p.stmt(BPF_RET | BPF_K, kKill);
    p.place(LArchOk);
    p.stmt(BPF_LD | BPF_W | BPF_ABS, kNr);
    // x32 system calls (nr | 0x40000000) would bypass the numbers below.
    p.stmt(BPF_ALU | BPF_AND | BPF_K, 0x40000000u);
    p.jeqTo(0, LNativeNr);
    p.stmt(BPF_RET | BPF_K, kKill);
    p.place(LNativeNr);
    p.stmt(BPF_LD | BPF_W | BPF_ABS, kNr);
    for (const long nr : std::initializer_list<long>{SYS_fork,
                                                     SYS_vfork,
                                                     SYS_execve,
                                                     SYS_execveat,
                                                     SYS_ptrace,
                                                     SYS_process_vm_readv,
                                                     SYS_process_vm_writev,
                                                     SYS_setpgid,
                                                     SYS_setsid,
                                                     SYS_tkill,
                                                     SYS_kcmp,
                                                     SYS_unshare,
                                                     SYS_setns,
                                                     SYS_mount,
                                                     SYS_umount2,
                                                     SYS_pivot_root,
                                                     SYS_chroot,
                                                     424L /* pidfd_send_signal */,
                                                     434L /* pidfd_open */,
                                                     438L /* pidfd_getfd */,
                                                     440L /* process_madvise */})
        p.jeqTo(static_cast<uint32_t>(nr), LKill);
    // Ways around the filter and the file rules: io_uring runs system calls the filter never
    // sees (sockets, opens), bpf and fanotify reach other processes' memory and files with the
    // CAP_SYS_ADMIN the profiling child keeps; modules and kexec for completeness.
    for (const long nr : std::initializer_list<long>{
             425L /* io_uring_setup */, 426L /* io_uring_enter */, 427L /* io_uring_register */,
             SYS_bpf, SYS_fanotify_init, SYS_open_by_handle_at, SYS_init_module, SYS_finit_module,
             SYS_delete_module, SYS_kexec_load, SYS_kexec_file_load})
        p.jeqTo(static_cast<uint32_t>(nr), LKill);
    // The kernel keyrings (a user's keys may live there) and perf events: refused.
    for (const long nr :
         std::initializer_list<long>{SYS_keyctl, SYS_add_key, SYS_request_key, SYS_perf_event_open})
        p.jeqTo(static_cast<uint32_t>(nr), LEperm);
    // Modes, owners, times and extended attributes of files (Landlock does not cover them): a
    // harness binary or cache made unreadable would stop the next evaluations.
    for (const long nr : std::initializer_list<long>{
             SYS_chmod,       SYS_fchmod,       SYS_fchmodat,     452L /* fchmodat2 */,
             SYS_chown,       SYS_fchown,       SYS_lchown,       SYS_fchownat,
             SYS_utime,       SYS_utimes,       SYS_futimesat,    SYS_utimensat,
             SYS_setxattr,    SYS_lsetxattr,    SYS_fsetxattr,    463L /* setxattrat */,
             SYS_removexattr, SYS_lremovexattr, SYS_fremovexattr, 466L /* removexattrat */})
        p.jeqTo(static_cast<uint32_t>(nr), LEperm);
    // Signals by I/O readiness (F_SETOWN, F_SETSIG, FIOSETOWN) to another process.
    // Without Landlock the file system stays writable to the process: the filter then refuses every
    // open that may change a file and every call that creates, renames or removes one (the child
    // needs none once it is set up; the report says this fallback is in force).
    const bool writeFallback = !report.landlock;
    if (writeFallback) {
        p.jeqTo(SYS_open, LOpen);
        p.jeqTo(SYS_openat, LOpenat);
        p.jeqTo(437 /* openat2: its flags are behind a pointer */, LEnosys);
        for (const long nr : std::initializer_list<long>{
                 SYS_creat, SYS_rename, SYS_renameat, SYS_renameat2, SYS_unlink, SYS_unlinkat,
                 SYS_link, SYS_linkat, SYS_symlink, SYS_symlinkat, SYS_mkdir, SYS_mkdirat,
                 SYS_rmdir, SYS_mknod, SYS_mknodat, SYS_truncate})
            p.jeqTo(static_cast<uint32_t>(nr), LNoWrite);
    }
    p.jeqTo(SYS_fcntl, LFcntl);
    p.jeqTo(SYS_ioctl, LIoctl);
    p.jeqTo(SYS_socket, LEperm);
    p.jeqTo(SYS_socketpair, LEperm);
    p.jeqTo(435 /* clone3 */, LEnosys);
    p.jeqTo(SYS_clone, LClone);
    for (const long nr : std::initializer_list<long>{SYS_kill, SYS_tgkill, SYS_rt_sigqueueinfo,
                                                     SYS_rt_tgsigqueueinfo})
        p.jeqTo(static_cast<uint32_t>(nr), LSelf);
    // Resource limits and memory placement of another process (the supervisor's file limit set to
    // 0 would stop it spawning): only of this one (pid 0 or its own), else killed.
    for (const long nr :
         std::initializer_list<long>{SYS_prlimit64, SYS_migrate_pages, SYS_move_pages})
        p.jeqTo(static_cast<uint32_t>(nr), LOwnKill);
    // Scheduling of another process (pinning or starving the supervisor): refused with EPERM (a
    // runtime setting its own thread's affinity by tid gets EPERM, which it tolerates).
    for (const long nr : std::initializer_list<long>{SYS_sched_setaffinity, SYS_sched_setscheduler,
                                                     SYS_sched_setparam, SYS_sched_setattr})
        p.jeqTo(static_cast<uint32_t>(nr), LOwnEperm);
    p.jeqTo(SYS_setpriority, LPriority);
    p.jeqTo(SYS_ioprio_set, LIoprio);
    p.stmt(BPF_RET | BPF_K, kAllow);
    p.place(LKill);
    p.stmt(BPF_RET | BPF_K, kKill);
    p.place(LEperm);
    p.stmt(BPF_RET | BPF_K, kEperm);
    p.place(LEnosys);
    p.stmt(BPF_RET | BPF_K, kEnosys);
    // clone: a thread (CLONE_THREAD) is allowed, anything else is a new process.
    p.place(LClone);
    p.stmt(BPF_LD | BPF_W | BPF_ABS, kArg0);
    p.stmt(BPF_ALU | BPF_AND | BPF_K, CLONE_THREAD);
    p.jeqTo(0, LCloneKill); // classic BPF jumps forward only
    p.stmt(BPF_RET | BPF_K, kAllow);
    p.place(LCloneKill);
    p.stmt(BPF_RET | BPF_K, kKill);
    // Signals: only to this process (a pid of 0 or below means a group, or every process).
    p.place(LSelf);
    p.stmt(BPF_LD | BPF_W | BPF_ABS, kArg0);
    p.jeqTo(self, LSelfOk);
    p.stmt(BPF_RET | BPF_K, kKill);
    p.place(LSelfOk);
    p.stmt(BPF_RET | BPF_K, kAllow);
    // pid 0 (this process) or its own pid, else killed.
    p.place(LOwnKill);
    p.stmt(BPF_LD | BPF_W | BPF_ABS, kArg0);
    p.jeqTo(0, LAllowTail);
    p.jeqTo(self, LAllowTail);
    p.stmt(BPF_RET | BPF_K, kKill);
    // pid 0 or its own pid, else EPERM.
    p.place(LOwnEperm);
    p.stmt(BPF_LD | BPF_W | BPF_ABS, kArg0);
    p.jeqTo(0, LAllowTail);
    p.jeqTo(self, LAllowTail);
    p.stmt(BPF_RET | BPF_K, kEperm);
    // setpriority / ioprio_set(which, who, ...): a process (PRIO_PROCESS 0, IOPRIO_WHO_PROCESS
    // 1) that is this one (who 0 or its pid), else EPERM.
    p.place(LPriority);
    p.stmt(BPF_LD | BPF_W | BPF_ABS, kArg0);
    p.jeqTo(0, LPriorityWho);
    p.stmt(BPF_RET | BPF_K, kEperm);
    p.place(LIoprio);
    p.stmt(BPF_LD | BPF_W | BPF_ABS, kArg0);
    p.jeqTo(1, LPriorityWho);
    p.stmt(BPF_RET | BPF_K, kEperm);
    p.place(LPriorityWho);
    p.stmt(BPF_LD | BPF_W | BPF_ABS, kArg1);
    p.jeqTo(0, LAllowTail);
    p.jeqTo(self, LAllowTail);
    p.stmt(BPF_RET | BPF_K, kEperm);
    // fcntl: F_SETOWN (8) only to nobody (0) or this process; F_SETSIG (10) and F_SETOWN_EX (15),
    // whose target the filter cannot read, refused.
    p.place(LFcntl);
    p.stmt(BPF_LD | BPF_W | BPF_ABS, kArg1);
    p.jeqTo(8, LFcntlOwner);
    p.jeqTo(10, LLocalDeny);
    p.jeqTo(15, LLocalDeny);
    p.stmt(BPF_RET | BPF_K, kAllow);
    p.place(LFcntlOwner);
    p.stmt(BPF_LD | BPF_W | BPF_ABS, kArg2);
    p.jeqTo(0, LAllowTail);
    p.jeqTo(self, LAllowTail);
    p.stmt(BPF_RET | BPF_K, kEperm);
    // ioctl: FIOSETOWN, SIOCSPGRP and TIOCSPGRP name a process (through a pointer): refused.
    p.place(LIoctl);
    p.stmt(BPF_LD | BPF_W | BPF_ABS, kArg1);
    p.jeqTo(0x8901, LLocalDeny);
    p.jeqTo(0x8902, LLocalDeny);
    p.jeqTo(0x5410, LLocalDeny);
    p.stmt(BPF_RET | BPF_K, kAllow);
    p.place(LLocalDeny); // an EPERM after the blocks above (jumps go forward only)
    p.stmt(BPF_RET | BPF_K, kEperm);
    if (writeFallback) {
        // open(path, flags) and openat(dir, path, flags): reading only.
        p.place(LOpen);
        p.stmt(BPF_LD | BPF_W | BPF_ABS, kArg1);
        p.stmt(BPF_ALU | BPF_AND | BPF_K, kWritingOpen);
        p.jeqTo(0, LAllowTail);
        p.stmt(BPF_RET | BPF_K, kEacces);
        p.place(LOpenat);
        p.stmt(BPF_LD | BPF_W | BPF_ABS, kArg2);
        p.stmt(BPF_ALU | BPF_AND | BPF_K, kWritingOpen);
        p.jeqTo(0, LAllowTail);
        p.stmt(BPF_RET | BPF_K, kEacces);
        p.place(LNoWrite);
        p.stmt(BPF_RET | BPF_K, kEacces);
    }
    p.place(LAllowTail);
    p.stmt(BPF_RET | BPF_K, kAllow);
    std::vector<sock_filter> program = p.build();
    if (program.empty()) {
        report.seccompWhy = "the filter program has a jump the kernel would refuse (a bug)";
        return report;
    }
    struct sock_fprog fprog;
    fprog.len = static_cast<unsigned short>(program.size());
    fprog.filter = program.data();
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
        report.seccompWhy = errnoText("prctl(PR_SET_NO_NEW_PRIVS)");
        return report;
    }
    // Every thread, the CUDA runtime's included; a kernel that cannot synchronise them (it names
    // the thread that blocks it) still gets the filter on this thread.
    if (::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &fprog) == 0) {
        report.seccomp = true;
        report.seccompAllThreads = true;
        report.seccompRefusesWrites = writeFallback;
    } else if (::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fprog) == 0) {
        report.seccomp = true;
        report.seccompRefusesWrites = writeFallback;
    } else {
        report.seccompWhy = errnoText("seccomp(SECCOMP_SET_MODE_FILTER)");
    }
#else
    report.seccompWhy = "the seccomp filter is only written for x86-64";
#endif
    return report;
}

} // namespace kev::gpu::sandbox
