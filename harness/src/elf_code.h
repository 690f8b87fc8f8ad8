#pragma once
// What the load-time lint reads in a function's bytes (elf_load_time.cpp): the calls, jumps,
// taken addresses and system calls it follows, by byte pattern, and the one toolchain function it
// matches byte for byte instead. Declared here for the tests.
#include <cstdint>
#include <optional>
#include <vector>

namespace kev::lint {

struct CodeRef {
    enum Kind { Direct, ThroughSlot, Indirect, AddressTaken, Syscall } kind;
    uint64_t target = 0; // the address called, or the memory slot called through
};

// Calls, jumps and system calls in a function's bytes, by pattern (no decoder): a misread byte
// can only add a reference, which makes the check stricter, never laxer.
std::vector<CodeRef> scanCode(const uint8_t* code, uint64_t base, uint64_t size);

// glibc's atexit matched byte for byte: its jump, or nullopt for any other body.
std::optional<std::vector<CodeRef>> atexitRefs(const uint8_t* code, uint64_t addr, uint64_t size);

} // namespace kev::lint
