#pragma once
// Drops every Linux capability of the process (effective, permitted, inheritable, ambient and the
// bounding set) before a candidate is loaded. A harness run as root otherwise hands the candidate
// CAP_SYS_PTRACE, with which it opens the non-dumpable verifier's /proc/PID/mem, and
// CAP_DAC_OVERRIDE, with which it writes any file (THREAT_MODEL.md, class 2).
#include <string>

namespace kev::gpu {

// True when the process ends with no capability but `keep` (a CAP_* number, or -1 for none);
// otherwise `why` names what failed.
bool dropCapabilities(std::string* why, int keep = -1);

} // namespace kev::gpu
