#pragma once
// The GPU child's last line of defence, installed after CUDA, cuBLAS and every harness buffer are
// set up and before the candidate's library is loaded (harness/THREAT_MODEL.md, classes 6 and 7).
//
// Capabilities: every set is emptied first (a child running as root keeps no CAP_SYS_PTRACE).
//
// Landlock (when the kernel has it; its ABI is probed at run time): the process may write only
// beneath its scratch folder (creating, writing, truncating, removing, renaming files there) and
// open the NVIDIA device files and /dev/null for writing; everything else on the file system is
// read-only to it (the peaks and reference caches, the job, the harness itself, /proc/self/mem).
// It may read everything but other processes' /proc entries (the verifier's and the supervisor's
// memory, environment and descriptors): every entry of / but /proc, its own /proc/<pid>, and the
// system-wide /proc files the C library and the driver read (KEVOLVE_SANDBOX_READS=all, an
// operator's diagnostic, lifts the read limit).
// With ABI >= 4 TCP is refused, with ABI >= 6 signals to processes outside the sandbox (the
// supervisor) and abstract UNIX sockets are too. Landlock restricts the calling thread and the
// threads it starts, which is every thread the candidate's code can run on; threads the CUDA
// runtime started earlier keep their access (the kernel offers no way to restrict them).
//
// seccomp (every thread, SECCOMP_FILTER_FLAG_TSYNC): killed with SIGSYS (a rule violation):
// creating processes (fork, vfork, clone without CLONE_THREAD), exec, ptrace, cross-process
// memory access, leaving the process group or session (setpgid, setsid), pidfd_open /
// pidfd_send_signal / pidfd_getfd, kcmp, process_madvise, namespaces and mounts (unshare, setns,
// mount, umount2, pivot_root, chroot), and signals to any process but this one (kill, tgkill,
// rt_sigqueueinfo and rt_tgsigqueueinfo only with this process's pid; tkill never), resource
// limits and page placement of another process (prlimit64, migrate_pages, move_pages). Another
// process's scheduling (sched_set*, setpriority, ioprio_set) fails with EPERM, sockets too, clone3
// with ENOSYS (glibc falls back to clone, whose flags the filter reads); so do chmod, chown,
// utimes and xattr calls (Landlock does not cover them) and F_SETOWN/F_SETSIG/FIOSETOWN towards
// another process. The process is made non-dumpable.
// Threads stay allowed because the CUDA runtime starts its own. Where Landlock is not active, the
// filter also refuses (EACCES) every open for writing, creating or truncating, and every create,
// rename, link and remove of a file: the child writes nowhere at all.
#include <string>

namespace kev::gpu::sandbox {

struct Options {
    // The only folder the candidate may write beneath; empty: none.
    std::string scratchDir;
    bool dropCapabilities = true;
    // false: no Landlock even where the kernel has it (tests of the filter's write fallback).
    bool landlock = true;
    // A capability the process keeps (the profiling child keeps CAP_SYS_ADMIN, which the driver
    // may require for performance counters); -1: none.
    int keepCapability = -1;
};

struct Report {
    bool capabilitiesDropped = false; // every set empty, the bounding set included
    int keptCapability = -1;
    std::string capabilitiesWhy;
    bool seccomp = false;
    bool seccompAllThreads = false; // TSYNC: threads started before the filter are filtered too
    // Without Landlock the filter refuses every open that may change a file, and every create,
    // rename, link and remove.
    bool seccompRefusesWrites = false;
    std::string seccompWhy;  // why not, when it is not installed
    int landlockAbi = 0;     // 0: the kernel has no Landlock
    bool landlock = false;   // a ruleset is enforced
    std::string landlockWhy; // why not, when it is not enforced
    std::string writable;    // what stays writable, for the evidence
    // One sentence for the report's "sandbox" check.
    std::string evidence() const;
};

// Installs Landlock then seccomp in the calling process. Never throws; the report says what is in
// place. Once installed nothing can lift it.
Report install(const Options& options);

// Only Landlock (for tests of the file rules without the seccomp filter).
void installLandlock(const Options& options, Report& report);

// Drops every capability: bounding, ambient, effective, permitted and inheritable sets. A child
// running as root keeps its uid but loses CAP_SYS_PTRACE (which would let it open a non-dumpable
// process's /proc/<pid>/mem), CAP_DAC_OVERRIDE and the rest. False with `why` on failure.
bool dropCapabilities(std::string* why, int keep = -1);

} // namespace kev::gpu::sandbox
