// How the load-time lint reads a function's bytes (elf_code.h): an instruction-length decoder for
// what the toolchain's load-time code uses, and the strict byte-pattern scan for anything else.
#include "elf_code.h"

#include <algorithm>
#include <cstring>
#include <set>

namespace kev::lint {

namespace {

bool isSyscallPair(uint8_t a, uint8_t b) {
    return (a == 0x0f && (b == 0x05 || b == 0x34)) || (a == 0xcd && b == 0x80);
}

int64_t readSigned(const uint8_t* p, uint64_t bytes) {
    if (bytes == 1)
        return static_cast<int8_t>(*p);
    int32_t v = 0;
    std::memcpy(&v, p, 4);
    return v;
}

// The target of a rel32 operand at `at`: relative to `next`, the address after the instruction.
uint64_t rel32Target(const uint8_t* at, uint64_t next) {
    return next + static_cast<uint64_t>(readSigned(at, 4));
}

} // namespace

std::vector<CodeRef> scanCode(const uint8_t* code, uint64_t base, uint64_t size) {
    std::vector<CodeRef> refs;
    for (uint64_t i = 0; i < size; ++i) {
        const uint8_t op = code[i];
        if ((op == 0xE8 || op == 0xE9) && i + 5 <= size) {
            refs.push_back({CodeRef::Direct, rel32Target(code + i + 1, base + i + 5)});
        } else if (op == 0xFF && i + 2 <= size) {
            const uint8_t modrm = code[i + 1];
            const int reg = (modrm >> 3) & 7;
            if ((modrm == 0x15 || modrm == 0x25) && i + 6 <= size) {
                refs.push_back({CodeRef::ThroughSlot, rel32Target(code + i + 2, base + i + 6)});
            } else if (reg == 2 || reg == 4) {
                refs.push_back({CodeRef::Indirect, base + i});
            }
        } else if (op == 0x8D && i + 6 <= size && (code[i + 1] & 0xC7) == 0x05) {
            refs.push_back({CodeRef::AddressTaken, rel32Target(code + i + 2, base + i + 6)});
        } else if (i + 2 <= size && isSyscallPair(op, code[i + 1])) {
            refs.push_back({CodeRef::Syscall, base + i});
        }
    }
    return refs;
}

// glibc's atexit (libc_nonshared): [endbr64] mov __dso_handle(%rip),%rdx (or lea); xor %esi,%esi;
// jmp __cxa_atexit. Matched byte for byte, its only reference is the jump: the pattern scan would
// read a syscall into the displacement of the mov whenever __dso_handle lies 0x0f05?? bytes away
// (an honest generated softmax on the H200: "atexit makes a system call").
std::optional<std::vector<CodeRef>> atexitRefs(const uint8_t* code, uint64_t addr, uint64_t size) {
    uint64_t i = 0;
    if (size >= 4 && code[0] == 0xf3 && code[1] == 0x0f && code[2] == 0x1e && code[3] == 0xfa)
        i = 4; // endbr64
    if (i + 14 != size || code[i] != 0x48 || (code[i + 1] != 0x8b && code[i + 1] != 0x8d) ||
        code[i + 2] != 0x15 || code[i + 7] != 0x31 || code[i + 8] != 0xf6 || code[i + 9] != 0xe9)
        return std::nullopt;
    return std::vector<CodeRef>{{CodeRef::Direct, rel32Target(code + i + 10, addr + size)}};
}

namespace {

bool isLegacyPrefix(uint8_t b) {
    switch (b) {
    case 0x66:
    case 0xf2:
    case 0xf3:
    case 0x2e:
    case 0x3e:
    case 0x26:
    case 0x64:
    case 0x65:
    case 0x36:
    case 0xf0:
        return true;
    default:
        return false;
    }
}

// What follows an opcode: a ModRM operand, an immediate, a relative branch target.
struct Operands {
    bool modrm = false;
    uint64_t imm = 0;       // bytes of immediate
    uint64_t rel = 0;       // bytes of branch displacement (1 or 4)
    bool call = false;      // e8: a Direct reference even when it lands inside the function
    bool syscall = false;   // 0f 05, 0f 34, cd 80
    bool groupF6 = false;   // f6/f7: an immediate with /0 and /1 only
    uint8_t regMask = 0xff; // the ModRM reg values the opcode is known with
};

// The one-byte map. nullopt: not an instruction the decoder knows.
std::optional<Operands> oneByte(uint8_t op, uint64_t immz, bool rexW, bool opsize, uint8_t next) {
    Operands o;
    if (op < 0x40) { // add, or, adc, sbb, and, sub, xor, cmp; 0f is handled by the caller
        switch (op & 7) {
        case 0:
        case 1:
        case 2:
        case 3:
            o.modrm = true;
            return o;
        case 4:
            o.imm = 1;
            return o;
        case 5:
            o.imm = immz;
            return o;
        default:
            return std::nullopt; // push/pop seg, daa...: invalid in 64-bit mode
        }
    }
    if (op >= 0x50 && op <= 0x5f) // push, pop
        return o;
    if (op >= 0x70 && op <= 0x7f) { // jcc rel8
        o.rel = 1;
        return o;
    }
    if (op >= 0x90 && op <= 0x99) // nop, xchg, cbw/cwde/cdqe, cwd/cdq/cqo
        return o;
    if (op >= 0xb0 && op <= 0xb7) { // mov imm8
        o.imm = 1;
        return o;
    }
    if (op >= 0xb8 && op <= 0xbf) { // mov imm32, imm16 or imm64
        o.imm = rexW ? 8 : opsize ? 2 : 4;
        return o;
    }
    switch (op) {
    case 0x63:
    case 0x84:
    case 0x85:
    case 0x86:
    case 0x87:
    case 0x88:
    case 0x89:
    case 0x8a:
    case 0x8b:
    case 0xd0:
    case 0xd1:
    case 0xd2:
    case 0xd3:
        o.modrm = true;
        return o;
    case 0x8d: // lea: a memory operand only
        o.modrm = true;
        return o;
    case 0x8f:
        o.modrm = true;
        o.regMask = 0x01;
        return o; // pop r/m (else XOP)
    case 0x68:
        o.imm = immz;
        return o;
    case 0x6a:
        o.imm = 1;
        return o;
    case 0x69:
        o.modrm = true;
        o.imm = immz;
        return o;
    case 0x6b:
    case 0x80:
    case 0x83:
    case 0xc0:
    case 0xc1:
        o.modrm = true;
        o.imm = 1;
        return o;
    case 0x81:
        o.modrm = true;
        o.imm = immz;
        return o;
    case 0xc6:
        o.modrm = true;
        o.imm = 1;
        o.regMask = 0x01;
        return o; // (else xabort)
    case 0xc7:
        o.modrm = true;
        o.imm = immz;
        o.regMask = 0x01;
        return o; // (else xbegin)
    case 0xa8:
        o.imm = 1;
        return o;
    case 0xa9:
        o.imm = immz;
        return o;
    case 0xc2:
        o.imm = 2;
        return o;
    case 0xc3:
    case 0xc9:
    case 0xcc:
    case 0xf4:
        return o;
    case 0xcd: // int: only int $0x80, a system call
        if (next != 0x80)
            return std::nullopt;
        o.imm = 1;
        o.syscall = true;
        return o;
    case 0xe8:
        o.rel = 4;
        o.call = true;
        return o;
    case 0xe9:
        o.rel = 4;
        return o;
    case 0xeb:
        o.rel = 1;
        return o;
    case 0xf6:
    case 0xf7:
        o.modrm = true;
        o.groupF6 = true;
        return o;
    case 0xfe:
        o.modrm = true;
        o.regMask = 0x03;
        return o; // inc, dec
    case 0xff:
        o.modrm = true;
        o.regMask = 0x57;
        return o; // inc, dec, call, jmp, push (no far)
    default:
        return std::nullopt;
    }
}

// The 0f map.
std::optional<Operands> twoByte(uint8_t op) {
    Operands o;
    if (op == 0x05 || op == 0x34) { // syscall, sysenter
        o.syscall = true;
        return o;
    }
    if (op == 0x0b || op == 0xa2) // ud2, cpuid
        return o;
    if (op >= 0x80 && op <= 0x8f) { // jcc rel32
        o.rel = 4;
        return o;
    }
    o.modrm = true;
    if (op == 0x1e || op == 0x1f || (op >= 0x40 && op <= 0x4f) || (op >= 0x90 && op <= 0x9f) ||
        op == 0xaf || op == 0xb6 || op == 0xb7 || op == 0xbe || op == 0xbf ||
        (op >= 0x10 && op <= 0x17) || (op >= 0x28 && op <= 0x2f) || (op >= 0x50 && op <= 0x6f) ||
        (op >= 0x74 && op <= 0x76) || op == 0x7e || op == 0x7f || op == 0xd4 || op == 0xd6 ||
        op == 0xdb || op == 0xdf || op == 0xeb || op == 0xef || op == 0xfa || op == 0xfb ||
        op == 0xfe)
        return o; // endbr64 and nops, cmov, setcc, imul, movzx/movsx, SSE moves and logic
    return std::nullopt;
}

} // namespace

std::optional<DecodedCode> decodeCode(const uint8_t* code, uint64_t base, uint64_t size) {
    if (size == 0)
        return std::nullopt;
    DecodedCode out;
    std::vector<bool> linked(size, false); // displacement bytes the link chose
    std::vector<uint64_t> inside;          // branch and lea targets inside the function
    std::set<uint64_t> syscalls;           // their addresses
    std::set<uint64_t> syscallOpcodes;     // offsets of the real ones' opcodes
    const auto mark = [&](uint64_t at, uint64_t n) {
        std::fill(linked.begin() + static_cast<std::ptrdiff_t>(at),
                  linked.begin() + static_cast<std::ptrdiff_t>(at + n), true);
    };
    uint64_t pos = 0;
    while (pos < size) {
        const uint64_t start = pos;
        out.starts.push_back(start);
        bool opsize = false;
        bool rexW = false;
        for (; pos < size && isLegacyPrefix(code[pos]); ++pos)
            opsize = opsize || code[pos] == 0x66;
        if (pos < size && (code[pos] & 0xf0) == 0x40)
            rexW = (code[pos++] & 0x08) != 0;
        if (pos >= size)
            return std::nullopt;
        const uint64_t opcodeAt = pos;
        const uint8_t first = code[pos++];
        const bool escape = first == 0x0f;
        if (escape && pos >= size)
            return std::nullopt;
        const uint8_t op = escape ? code[pos++] : first;
        const uint64_t immz = opsize && !rexW ? 2 : 4;
        const std::optional<Operands> o =
            escape ? twoByte(op) : oneByte(op, immz, rexW, opsize, pos < size ? code[pos] : 0);
        if (!o)
            return std::nullopt;
        // 66 on a branch: rel16 and a truncated rip on AMD, ignored on Intel.
        if (o->rel && opsize)
            return std::nullopt;

        uint8_t reg = 0;
        bool rip = false;
        bool memory = false;
        uint64_t dispAt = 0;
        if (o->modrm) {
            if (pos >= size)
                return std::nullopt;
            const uint8_t modrm = code[pos++];
            const int mod = modrm >> 6;
            const int rm = modrm & 7;
            reg = static_cast<uint8_t>((modrm >> 3) & 7);
            uint64_t disp = 0;
            memory = mod != 3;
            if (mod != 3 && rm == 4) {
                if (pos >= size)
                    return std::nullopt;
                const uint8_t sib = code[pos++];
                if (mod == 0 && (sib & 7) == 5)
                    disp = 4;
            } else if (mod == 0 && rm == 5) {
                disp = 4;
                rip = true;
            }
            if (mod == 1)
                disp = 1;
            else if (mod == 2)
                disp = 4;
            dispAt = pos;
            pos += disp;
            if (!((o->regMask >> reg) & 1))
                return std::nullopt;
        }
        if (!escape && op == 0x8d && !memory)
            return std::nullopt; // lea of a register: #UD
        uint64_t imm = o->imm;
        if (o->groupF6)
            imm = reg > 1 ? 0 : op == 0xf6 ? 1 : immz;
        pos += imm;
        const uint64_t relAt = pos;
        pos += o->rel;
        if (pos > size || pos - start > 15)
            return std::nullopt;

        if (o->syscall) {
            syscalls.insert(base + start);
            syscallOpcodes.insert(opcodeAt);
        }
        if (rip) {
            mark(dispAt, 4);
            const uint64_t target = rel32Target(code + dispAt, base + pos);
            if (!escape && op == 0x8d) {
                out.refs.push_back({CodeRef::AddressTaken, target});
                if (target >= base && target < base + size)
                    inside.push_back(target - base);
            } else if (!escape && op == 0xff && (reg == 2 || reg == 4)) {
                out.refs.push_back({CodeRef::ThroughSlot, target});
            }
        } else if (!escape && op == 0xff && (reg == 2 || reg == 4)) {
            out.refs.push_back({CodeRef::Indirect, base + start});
        }
        if (o->rel) {
            mark(relAt, o->rel);
            const uint64_t target =
                base + pos + static_cast<uint64_t>(readSigned(code + relAt, o->rel));
            const bool within = target >= base && target < base + size;
            if (within)
                inside.push_back(target - base);
            if (!within || o->call || (!escape && op == 0xe9))
                out.refs.push_back({CodeRef::Direct, target});
        }
    }
    // A branch or a taken address between two instruction starts could run an operand's bytes.
    for (const uint64_t t : inside) {
        if (!std::binary_search(out.starts.begin(), out.starts.end(), t))
            return std::nullopt;
    }
    // A system-call byte pair inside an instruction still counts, unless it overlaps a displacement
    // the link chose (rip-relative or a branch's): those move with the layout of every candidate,
    // while an immediate or an opcode byte is the code's own.
    for (uint64_t i = 0; i + 1 < size; ++i) {
        if (isSyscallPair(code[i], code[i + 1]) && !linked[i] && !linked[i + 1] &&
            !syscallOpcodes.count(i))
            syscalls.insert(base + i);
    }
    for (const uint64_t at : syscalls)
        out.refs.push_back({CodeRef::Syscall, at});
    return out;
}

} // namespace kev::lint
