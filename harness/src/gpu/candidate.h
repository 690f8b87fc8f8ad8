#pragma once
// The candidate's shared library as the GPU child sees it: loaded with RTLD_LOCAL after the
// sandbox is in place, its entry points resolved, and the services table it may call.
#include <kevolve/abi.h>

#include <string>

namespace kev::gpu {

using LaunchFn = int (*)(const KevolveArgs*, cudaStream_t);
using WorkspaceFn = uint64_t (*)(const KevolveArgs*);

class CandidateLibrary {
public:
    CandidateLibrary() = default;
    CandidateLibrary(const CandidateLibrary&) = delete;
    CandidateLibrary& operator=(const CandidateLibrary&) = delete;

    // Returns false with `error` naming what is missing or why dlopen failed.
    bool load(const std::string& path, std::string* error);
    LaunchFn launch() const { return m_launch; }
    WorkspaceFn workspace() const { return m_workspace; }

private:
    // Never dlclose'd: the fatbinary registration must outlive every pending kernel, and the
    // child exits right after the evaluation anyway.
    void* m_handle = nullptr;
    LaunchFn m_launch = nullptr;
    WorkspaceFn m_workspace = nullptr;
};

// The services table handed to candidates (tensor-map encoding through the driver entry point).
const KevolveServices* services();

// Marks the span in which the candidate's host code runs, so that an exit() from inside it is
// reported as the candidate's doing (the atexit handler writes the evidence).
void enterCandidate(const char* what);
void leaveCandidate();
const char* candidateActivity(); // null when not inside the candidate

} // namespace kev::gpu
