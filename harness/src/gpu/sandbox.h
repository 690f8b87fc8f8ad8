#pragma once
// The GPU child's last line of defence: a seccomp filter installed after CUDA, cuBLAS and every
// harness buffer are set up and before the candidate's library is loaded. Forbidden: creating
// processes (fork, vfork, clone without CLONE_THREAD), exec, ptrace and cross-process memory
// access (the process is killed with SIGSYS, which the supervisor reports as a rule violation);
// sockets fail with EPERM. Threads stay allowed because the CUDA runtime starts its own.
#include <string>

namespace kev::gpu::sandbox {

// Returns true when the filter is in place; otherwise `why` says why not (the report records it).
bool install(std::string* why);

} // namespace kev::gpu::sandbox
