// One GPU, one measurement at a time across every kevolve-harness of a user on a host: the
// supervisor holds this lock on the GPU while its GPU children run (evaluation and profiling), so
// two harness processes pointed at the same GPU (two sessions, or two workers the client could
// not tell apart) take turns instead of timing under each other's load. flock(2) on
// <dir>/gpu-<key>.lock: the kernel drops it when its holder dies, so a crash never leaves a GPU
// locked. Within one supervisor, GPU work is serialised per device already.
#pragma once

#include <string>

namespace kev {

class GpuLock {
public:
    GpuLock() = default;
    ~GpuLock();
    GpuLock(const GpuLock&) = delete;
    GpuLock& operator=(const GpuLock&) = delete;

    // $KEVOLVE_LOCK_DIR, else $XDG_RUNTIME_DIR/kevolve, else /tmp/kevolve-locks-<uid>.
    static std::string defaultDir();

    // Takes the lock on `key` (a GPU UUID or PCI bus id) without waiting. False when another
    // process holds it (*holder: its pid, or 0 when unknown) or when the lock file cannot be used
    // (*error says why; the caller measures anyway rather than never).
    bool tryAcquire(const std::string& dir, const std::string& key, int* holder,
                    std::string* error);
    void release();
    bool held() const { return m_fd >= 0; }

private:
    int m_fd = -1;
};

} // namespace kev
