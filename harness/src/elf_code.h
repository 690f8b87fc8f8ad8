#pragma once
// What the load-time lint reads in a function's bytes (elf_load_time.cpp): the calls, jumps,
// taken addresses and system calls it follows. A function is decoded instruction by instruction
// where every byte is an instruction the decoder knows (decodeCode); any other body gets the
// strict byte-pattern scan (scanCode). Declared here for the tests.
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

struct DecodedCode {
    std::vector<CodeRef> refs;
    std::vector<uint64_t> starts; // offsets of the instructions from `base`, ascending
};

// A linear sweep from the first byte to exactly `size`, with the lengths of the instructions
// gcc, nvcc's host code and glibc's crt use. References: Direct (call/jmp rel32; jmp/jcc leaving
// the function), ThroughSlot (call/jmp *disp(%rip)), Indirect (other call/jmp through a register
// or memory), AddressTaken (lea disp(%rip)), Syscall (a syscall, sysenter or int $0x80, or such a
// byte pair anywhere but in a displacement the link chose). nullopt for any opcode or prefix the
// decoder does not know, an instruction running past `size`, or a branch or lea that lands
// inside the function between two instruction starts: the caller then scans by pattern.
std::optional<DecodedCode> decodeCode(const uint8_t* code, uint64_t base, uint64_t size);

} // namespace kev::lint
