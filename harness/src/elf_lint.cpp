#include "elf_lint.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>

namespace kev::lint {

namespace {

constexpr uint16_t kEmX86_64 = 62;

constexpr uint32_t kShtSymtab = 2;
constexpr uint32_t kShtStrtab = 3;
constexpr uint32_t kShtRela = 4;
constexpr uint32_t kShtDynamic = 6;
constexpr uint32_t kShtNobits = 8;
constexpr uint32_t kShtDynsym = 11;
constexpr uint32_t kShtInitArray = 14;
constexpr uint32_t kShtPreinitArray = 16;
constexpr uint32_t kShtGnuVerneed = 0x6ffffffe;
constexpr uint32_t kShtGnuVersym = 0x6fffffff;

constexpr uint64_t kShfAlloc = 0x2;
constexpr uint64_t kShfExecinstr = 0x4;

constexpr uint8_t kStbLocal = 0;
constexpr uint8_t kStbGlobal = 1;
constexpr uint8_t kStbWeak = 2;
constexpr uint8_t kStbGnuUnique = 10;
constexpr uint8_t kSttFunc = 2;

constexpr uint32_t kRX86_64_64 = 1;
constexpr uint32_t kRX86_64GlobDat = 6;
constexpr uint32_t kRX86_64JumpSlot = 7;
constexpr uint32_t kRX86_64Relative = 8;
constexpr uint32_t kRAarch64Abs64 = 257;
constexpr uint32_t kRAarch64GlobDat = 1025;
constexpr uint32_t kRAarch64JumpSlot = 1026;
constexpr uint32_t kRAarch64Relative = 1027;

constexpr int64_t kDtNeeded = 1;

std::string hex(uint64_t v) {
    std::ostringstream s;
    s << "0x" << std::hex << v;
    return s.str();
}

bool startsWith(const std::string& s, const char* prefix) {
    return s.compare(0, std::strlen(prefix), prefix) == 0;
}

// Undefined symbols a candidate may need, each with the reason it is harmless.
struct Allowed {
    const char* name;
    bool prefix;
    const char* why;
};

const Allowed kUndefinedAllowed[] = {
    // What nvcc's generated host code calls to register the module and launch kernels.
    {"__cudaRegisterFatBinary", false, "nvcc module registration"},
    {"__cudaRegisterFatBinaryEnd", false, "nvcc module registration"},
    {"__cudaUnregisterFatBinary", false, "nvcc module teardown"},
    {"__cudaRegisterFunction", false, "nvcc kernel registration"},
    {"__cudaRegisterVar", false, "nvcc __device__/__constant__ variable registration"},
    {"__cudaRegisterManagedVar", false, "nvcc __managed__ variable registration"},
    {"__cudaPushCallConfiguration", false, "<<<...>>> launch syntax"},
    {"__cudaPopCallConfiguration", false, "<<<...>>> launch syntax"},
    {"__cudaGetKernel", false, "<<<...>>> launch syntax"},
    {"__cudaLaunchKernel", false, "<<<...>>> launch syntax"},
    {"__cudaInitModule", false, "nvcc module initialisation"},
    // Launches and launch-time queries: they go through the harness's launch hooks and audit.
    {"cudaLaunchKernel", false, "kernel launch"},
    {"cudaLaunchKernelExC", false, "cluster / attribute launch (cudaLaunchKernelEx)"},
    {"cudaLaunchCooperativeKernel", false, "cooperative launch"},
    {"cudaFuncSetAttribute", false, "raising a kernel's shared-memory limit"},
    {"cudaFuncGetAttributes", false, "querying a kernel's resources"},
    {"cudaFuncSetCacheConfig", false, "L1/shared carve-out preference"},
    {"cudaGetLastError", false, "launch error check"},
    {"cudaPeekAtLastError", false, "launch error check"},
    {"cudaGetErrorString", false, "error text"},
    {"cudaGetErrorName", false, "error text"},
    {"cudaGetDevice", false, "device query"},
    {"cudaDeviceGetAttribute", false, "device query"},
    {"cudaGetDeviceProperties_v2", false, "device query"},
    {"cudaOccupancy", true, "occupancy queries"},
    // The C++ ABI and runtime support every C++ object may reference.
    {"__cxa_atexit", false, "C++ static destructors (nvcc registers its module teardown)"},
    {"__cxa_finalize", false, "C++ shared-object teardown"},
    {"__cxa_guard_", true, "thread-safe function-local statics"},
    {"__gxx_personality_v0", false, "C++ exception tables"},
    {"_Unwind_Resume", false, "C++ exception tables"},
    {"__cxa_begin_catch", false, "C++ exception handling"},
    {"__cxa_end_catch", false, "C++ exception handling"},
    {"__cxa_rethrow", false, "C++ exception handling"},
    {"_ZSt9terminatev", false, "std::terminate for noexcept violations"},
    {"_Znwm", false, "operator new (host-side objects)"},
    {"_Znam", false, "operator new[]"},
    {"_ZdlPv", false, "operator delete"},
    {"_ZdlPvm", false, "sized operator delete"},
    {"_ZdaPv", false, "operator delete[]"},
    {"_ZdaPvm", false, "sized operator delete[]"},
    {"__stack_chk_fail", false, "stack protector"},
    {"__tls_get_addr", false, "thread_local data (the loader's TLS accessor)"},
    {"__gmon_start__", false, "profiling hook of crtbegin (weak)"},
    {"_ITM_", true, "transactional-memory hooks of crtbegin (weak)"},
    // Memory functions the compiler emits for copies of host structs (e.g. CUtensorMap).
    {"memcpy", false, "struct copies"},
    {"memmove", false, "struct copies"},
    {"memset", false, "struct initialisation"},
    {"memcmp", false, "struct comparison"},
    {"strlen", false, "string length"},
    {"__memcpy_chk", false, "memcpy under _FORTIFY_SOURCE"},
    {"__memmove_chk", false, "memmove under _FORTIFY_SOURCE"},
    {"__memset_chk", false, "memset under _FORTIFY_SOURCE"},
};

// libm's scalar functions: pure computations a host-side heuristic (tile sizes) may use.
const char* const kMathFunctions[] = {
    "acos",      "asin",  "atan",      "atan2",  "cos",     "sin",    "tan",    "cosh",  "sinh",
    "tanh",      "acosh", "asinh",     "atanh",  "exp",     "exp2",   "expm1",  "log",   "log2",
    "log10",     "log1p", "logb",      "ilogb",  "pow",     "sqrt",   "cbrt",   "hypot", "fabs",
    "floor",     "ceil",  "round",     "lround", "llround", "trunc",  "rint",   "lrint", "llrint",
    "nearbyint", "fmod",  "remainder", "fmin",   "fmax",    "fdim",   "fma",    "frexp", "ldexp",
    "scalbn",    "modf",  "copysign",  "erf",    "erfc",    "lgamma", "tgamma",
};

bool isMathFunction(const std::string& name) {
    for (const char* fn : kMathFunctions) {
        const std::string base = fn;
        if (name == base || name == base + "f" || name == base + "l")
            return true;
    }
    return false;
}

bool matches(const Allowed& a, const std::string& name) {
    return a.prefix ? startsWith(name, a.name) : name == a.name;
}

// Exported names a candidate may define, with the reason.
const Allowed kExportAllowed[] = {
    {"kevolve_launch", false, "the ABI entry point"},
    {"kevolve_workspace_bytes", false, "the ABI workspace query"},
    {"_edata", false, "linker-defined"},
    {"_end", false, "linker-defined"},
    {"__bss_start", false, "linker-defined"},
    {"_init", false, "crti's DT_INIT function"},
    {"_fini", false, "crti's DT_FINI function"},
};

// .init_array entries the toolchain itself places there.
const char* const kInitAllowed[] = {
    "frame_dummy",                    // crtbegin's registration of exception frames
    "_ZL24__sti____cudaRegisterAllv", // nvcc's registration of the module's kernels
    "__sti____cudaRegisterAll",       // the same in older nvcc, unmangled
};

std::string joinNames(const std::vector<std::string>& names, size_t limit = 40) {
    std::string out;
    for (size_t i = 0; i < names.size() && i < limit; ++i) {
        if (i > 0)
            out += ", ";
        out += names[i];
    }
    if (names.size() > limit)
        out += ", ... (" + std::to_string(names.size() - limit) + " more)";
    return out;
}

} // namespace

std::string ElfSymbol::display() const {
    if (version.empty())
        return name;
    return name + "@" + version;
}

bool undefinedAllowed(const ElfSymbol& symbol) {
    for (const auto& a : kUndefinedAllowed) {
        if (matches(a, symbol.name))
            return true;
    }
    return isMathFunction(symbol.name);
}

bool exportAllowed(const ElfSymbol& symbol) {
    for (const auto& a : kExportAllowed) {
        if (matches(a, symbol.name))
            return true;
    }
    // Inline functions and template instantiations the candidate's C++ happens to emit: weak or
    // unique by the ODR, and never what the harness calls.
    return (symbol.binding == kStbWeak || symbol.binding == kStbGnuUnique) &&
           startsWith(symbol.name, "_Z");
}

bool initEntryAllowed(const std::string& name) {
    return std::any_of(std::begin(kInitAllowed), std::end(kInitAllowed),
                       [&](const char* a) { return name == a; });
}

template <typename T> T ElfFile::read(uint64_t offset) const {
    if (offset > m_bytes.size() || m_bytes.size() - offset < sizeof(T))
        throw ElfError(m_label + ": truncated ELF file (read at " + hex(offset) + ")");
    T v;
    std::memcpy(&v, m_bytes.data() + offset, sizeof(T));
    return v;
}

ElfFile ElfFile::load(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw ElfError(path + ": cannot open");
    std::ostringstream text;
    text << in.rdbuf();
    const std::string data = text.str();
    std::vector<uint8_t> bytes(data.begin(), data.end());
    return fromBytes(std::move(bytes), path);
}

ElfFile ElfFile::fromBytes(std::vector<uint8_t> bytes, const std::string& label) {
    ElfFile f;
    f.m_label = label;
    f.m_bytes = std::move(bytes);
    const auto& b = f.m_bytes;
    if (b.size() < 64 || b[0] != 0x7f || b[1] != 'E' || b[2] != 'L' || b[3] != 'F')
        throw ElfError(label + ": not an ELF file");
    if (b[4] != 2)
        throw ElfError(label + ": not a 64-bit ELF file");
    if (b[5] != 1)
        throw ElfError(label + ": not a little-endian ELF file");
    f.m_machine = f.read<uint16_t>(18);
    const uint64_t shoff = f.read<uint64_t>(40);
    const uint16_t shentsize = f.read<uint16_t>(58);
    uint64_t shnum = f.read<uint16_t>(60);
    uint32_t shstrndx = f.read<uint16_t>(62);
    if (shoff == 0)
        throw ElfError(label + ": no section headers");
    if (shentsize != 64)
        throw ElfError(label + ": unexpected section header size " + std::to_string(shentsize));
    if (shnum == 0)
        shnum = f.read<uint64_t>(shoff + 32);
    if (shstrndx == 0xffff)
        shstrndx = f.read<uint32_t>(shoff + 40);
    if (shnum > 65536 || shoff + shnum * 64 > b.size())
        throw ElfError(label + ": section headers run past the end of the file");
    std::vector<uint32_t> nameOffsets;
    for (uint64_t i = 0; i < shnum; ++i) {
        const uint64_t h = shoff + i * 64;
        Section s;
        nameOffsets.push_back(f.read<uint32_t>(h));
        s.type = f.read<uint32_t>(h + 4);
        s.flags = f.read<uint64_t>(h + 8);
        s.addr = f.read<uint64_t>(h + 16);
        s.offset = f.read<uint64_t>(h + 24);
        s.size = f.read<uint64_t>(h + 32);
        s.link = f.read<uint32_t>(h + 40);
        s.info = f.read<uint32_t>(h + 44);
        s.entsize = f.read<uint64_t>(h + 56);
        if (s.type != kShtNobits && (s.offset > b.size() || b.size() - s.offset < s.size))
            throw ElfError(label + ": section " + std::to_string(i) +
                           " runs past the end of the file");
        f.m_sections.push_back(s);
    }
    if (shstrndx >= f.m_sections.size())
        throw ElfError(label + ": bad section name table index");
    for (size_t i = 0; i < f.m_sections.size(); ++i)
        f.m_sections[i].name = f.stringAt(f.m_sections[shstrndx], nameOffsets[i]);

    for (const auto& s : f.m_sections) {
        if (s.type == kShtDynsym)
            f.m_dynsym = f.readSymbols(s);
        else if (s.type == kShtSymtab)
            f.m_symtab = f.readSymbols(s);
        else if (s.type == kShtDynamic && s.link < f.m_sections.size()) {
            for (uint64_t off = 0; off + 16 <= s.size; off += 16) {
                const auto tag = f.read<int64_t>(s.offset + off);
                if (tag == 0)
                    break;
                f.m_dynamic.push_back({tag, f.read<uint64_t>(s.offset + off + 8)});
                if (tag == kDtNeeded)
                    f.m_needed.push_back(
                        f.stringAt(f.m_sections[s.link], f.read<uint64_t>(s.offset + off + 8)));
            }
        }
    }
    f.readVersions();
    // Program headers: PT_TLS says whether the object has thread-local storage.
    const uint64_t phoff = f.read<uint64_t>(32);
    const uint16_t phentsize = f.read<uint16_t>(54);
    const uint16_t phnum = f.read<uint16_t>(56);
    if (phoff != 0 && phentsize == 56) {
        for (uint16_t i = 0; i < phnum; ++i) {
            const uint64_t h = phoff + uint64_t{i} * 56;
            Segment seg;
            seg.type = f.read<uint32_t>(h);
            seg.vaddr = f.read<uint64_t>(h + 16);
            seg.filesz = f.read<uint64_t>(h + 32);
            seg.memsz = f.read<uint64_t>(h + 40);
            f.m_segments.push_back(seg);
        }
    }
    return f;
}

std::vector<ElfFile::Reloc> ElfFile::relocations() const {
    std::vector<Reloc> all;
    for (const auto& s : m_sections) {
        if (s.type == kShtRela) {
            const auto more = readRelocs(s);
            all.insert(all.end(), more.begin(), more.end());
        }
    }
    return all;
}

std::vector<InitEntry> ElfFile::pointerArray(uint64_t addr, uint64_t size) const {
    const std::vector<Reloc> relocs = relocations();
    std::vector<InitEntry> entries;
    for (uint64_t off = 0; off + 8 <= size; off += 8) {
        const uint64_t slot = addr + off;
        InitEntry e;
        if (const uint8_t* p = bytesAt(slot, 8))
            std::memcpy(&e.address, p, 8);
        for (const auto& r : relocs) {
            if (r.offset != slot)
                continue;
            if (r.type == kRX86_64Relative || r.type == kRAarch64Relative) {
                e.address = static_cast<uint64_t>(r.addend);
            } else if (r.symbol < m_dynsym.size()) {
                const ElfSymbol& sym = m_dynsym[r.symbol];
                e.symbol = sym.name + (r.addend ? "+" + hex(static_cast<uint64_t>(r.addend)) : "");
                e.address = sym.undefined() ? 0 : sym.value + static_cast<uint64_t>(r.addend);
            }
        }
        if (e.symbol.empty())
            e.symbol = functionNameAt(e.address);
        entries.push_back(e);
    }
    return entries;
}

std::string ElfFile::functionNameAt(uint64_t addr) const {
    for (const auto* table : {&m_symtab, &m_dynsym}) {
        for (const auto& sym : *table) {
            if (sym.value == addr && !sym.undefined() && sym.type == kSttFunc && !sym.name.empty())
                return sym.name;
        }
    }
    return {};
}

const ElfFile::Section* ElfFile::section(const std::string& name) const {
    for (const auto& s : m_sections) {
        if (s.name == name)
            return &s;
    }
    return nullptr;
}

std::string ElfFile::stringAt(const Section& strtab, uint64_t offset) const {
    if (strtab.type == kShtNobits || offset >= strtab.size)
        throw ElfError(m_label + ": string offset " + hex(offset) + " outside its table");
    const char* start = reinterpret_cast<const char*>(m_bytes.data() + strtab.offset + offset);
    const size_t max = strtab.size - offset;
    const size_t len = strnlen(start, max);
    if (len == max)
        throw ElfError(m_label + ": unterminated string in " + strtab.name);
    return std::string(start, len);
}

std::vector<ElfSymbol> ElfFile::readSymbols(const Section& s) const {
    if (s.link >= m_sections.size() || m_sections[s.link].type != kShtStrtab)
        throw ElfError(m_label + ": symbol table " + s.name + " has no string table");
    const Section& strtab = m_sections[s.link];
    std::vector<ElfSymbol> symbols;
    const uint64_t count = s.size / 24;
    for (uint64_t i = 0; i < count; ++i) {
        const uint64_t e = s.offset + i * 24;
        ElfSymbol sym;
        sym.name = stringAt(strtab, read<uint32_t>(e));
        const auto info = read<uint8_t>(e + 4);
        sym.binding = static_cast<uint8_t>(info >> 4);
        sym.type = static_cast<uint8_t>(info & 0xf);
        sym.visibility = static_cast<uint8_t>(read<uint8_t>(e + 5) & 0x3);
        sym.section = read<uint16_t>(e + 6);
        sym.value = read<uint64_t>(e + 8);
        sym.size = read<uint64_t>(e + 16);
        symbols.push_back(std::move(sym));
    }
    return symbols;
}

void ElfFile::readVersions() {
    const Section* versym = nullptr;
    const Section* verneed = nullptr;
    for (const auto& s : m_sections) {
        if (s.type == kShtGnuVersym)
            versym = &s;
        else if (s.type == kShtGnuVerneed)
            verneed = &s;
    }
    if (!versym || !verneed || verneed->link >= m_sections.size())
        return;
    struct Need {
        std::string version, file;
    };
    std::vector<std::pair<uint16_t, Need>> needs;
    const Section& strtab = m_sections[verneed->link];
    uint64_t off = 0;
    for (int guard = 0; guard < 1024 && off + 16 <= verneed->size; ++guard) {
        const uint64_t e = verneed->offset + off;
        const auto cnt = read<uint16_t>(e + 2);
        const std::string file = stringAt(strtab, read<uint32_t>(e + 4));
        uint64_t aux = off + read<uint32_t>(e + 8);
        for (uint16_t k = 0; k < cnt && aux + 16 <= verneed->size; ++k) {
            const uint64_t a = verneed->offset + aux;
            const auto other = read<uint16_t>(a + 6);
            needs.push_back({other, {stringAt(strtab, read<uint32_t>(a + 8)), file}});
            const auto next = read<uint32_t>(a + 12);
            if (next == 0)
                break;
            aux += next;
        }
        const auto next = read<uint32_t>(e + 12);
        if (next == 0)
            break;
        off += next;
    }
    for (size_t i = 0; i < m_dynsym.size() && (i + 1) * 2 <= versym->size; ++i) {
        const uint16_t index = read<uint16_t>(versym->offset + i * 2) & 0x7fff;
        for (const auto& [other, need] : needs) {
            if (other == index) {
                m_dynsym[i].version = need.version;
                m_dynsym[i].library = need.file;
            }
        }
    }
}

std::vector<ElfFile::Reloc> ElfFile::readRelocs(const Section& s) const {
    std::vector<Reloc> relocs;
    for (uint64_t off = 0; off + 24 <= s.size; off += 24) {
        Reloc r;
        r.offset = read<uint64_t>(s.offset + off);
        const auto info = read<uint64_t>(s.offset + off + 8);
        r.symbol = static_cast<uint32_t>(info >> 32);
        r.type = static_cast<uint32_t>(info & 0xffffffffu);
        r.addend = read<int64_t>(s.offset + off + 16);
        relocs.push_back(r);
    }
    return relocs;
}

const uint8_t* ElfFile::bytesAt(uint64_t addr, uint64_t len) const {
    for (const auto& s : m_sections) {
        if (!(s.flags & kShfAlloc) || s.type == kShtNobits)
            continue;
        if (addr >= s.addr && addr - s.addr <= s.size && s.size - (addr - s.addr) >= len)
            return m_bytes.data() + s.offset + (addr - s.addr);
    }
    return nullptr;
}

std::vector<InitEntry> ElfFile::initArray() const {
    std::vector<Reloc> relocs;
    for (const auto& s : m_sections) {
        if (s.type == kShtRela) {
            const auto more = readRelocs(s);
            relocs.insert(relocs.end(), more.begin(), more.end());
        }
    }
    const auto nameAt = [&](uint64_t addr) -> std::string {
        for (const auto* table : {&m_symtab, &m_dynsym}) {
            for (const auto& sym : *table) {
                if (sym.value == addr && !sym.undefined() && sym.type == kSttFunc &&
                    !sym.name.empty())
                    return sym.name;
            }
        }
        return {};
    };
    std::vector<InitEntry> entries;
    for (const auto& s : m_sections) {
        if (s.type != kShtInitArray && s.type != kShtPreinitArray)
            continue;
        for (uint64_t off = 0; off + 8 <= s.size; off += 8) {
            const uint64_t slot = s.addr + off;
            InitEntry e;
            e.address = read<uint64_t>(s.offset + off);
            bool named = false;
            for (const auto& r : relocs) {
                if (r.offset != slot)
                    continue;
                if (r.type == kRX86_64Relative || r.type == kRAarch64Relative) {
                    e.address = static_cast<uint64_t>(r.addend);
                } else if ((r.type == kRX86_64_64 || r.type == kRAarch64Abs64) &&
                           r.symbol < m_dynsym.size()) {
                    const ElfSymbol& sym = m_dynsym[r.symbol];
                    e.symbol =
                        sym.name + (r.addend ? "+" + hex(static_cast<uint64_t>(r.addend)) : "");
                    e.address = sym.value + static_cast<uint64_t>(r.addend);
                    named = true;
                }
            }
            if (!named)
                e.symbol = nameAt(e.address);
            entries.push_back(e);
        }
    }
    return entries;
}

std::vector<uint64_t> ElfFile::gotSlotsOf(const std::string& symbol) const {
    std::vector<uint64_t> slots;
    for (const auto& s : m_sections) {
        if (s.type != kShtRela)
            continue;
        for (const auto& r : readRelocs(s)) {
            const bool slotType = r.type == kRX86_64GlobDat || r.type == kRX86_64JumpSlot ||
                                  r.type == kRAarch64GlobDat || r.type == kRAarch64JumpSlot;
            if (slotType && r.symbol < m_dynsym.size() && m_dynsym[r.symbol].name == symbol)
                slots.push_back(r.offset);
        }
    }
    return slots;
}

namespace {

// x86-64 code references found by pattern, without a full decoder: rel32 calls and jumps
// (E8, E9, 0F 80-8F) and RIP-relative operands (opcode, ModRM with mod=00 rm=101, disp32) of the
// opcodes that load, jump through or take an address (8B mov, 8D lea, FF call/jmp/push). A
// misread byte can only add a reference, which makes the lint stricter, never laxer.
template <typename F>
void scanX86References(const uint8_t* code, uint64_t base, uint64_t size, F f) {
    for (uint64_t i = 0; i < size; ++i) {
        const uint8_t op = code[i];
        int32_t disp = 0;
        if ((op == 0xE8 || op == 0xE9) && i + 5 <= size) {
            std::memcpy(&disp, code + i + 1, 4);
            f(base + i, base + i + 5 + static_cast<uint64_t>(static_cast<int64_t>(disp)),
              op == 0xE8);
        } else if (op == 0x0F && i + 6 <= size && (code[i + 1] & 0xF0) == 0x80) {
            std::memcpy(&disp, code + i + 2, 4);
            f(base + i, base + i + 6 + static_cast<uint64_t>(static_cast<int64_t>(disp)), false);
        }
        if ((op == 0x8B || op == 0x8D || op == 0xFF) && i + 6 <= size &&
            (code[i + 1] & 0xC7) == 0x05) {
            std::memcpy(&disp, code + i + 2, 4);
            f(base + i, base + i + 6 + static_cast<uint64_t>(static_cast<int64_t>(disp)), false);
        }
    }
}

} // namespace

uint64_t ElfFile::pltEntryFor(uint64_t gotSlot) const {
    for (const auto& s : m_sections) {
        if (!startsWith(s.name, ".plt") || s.type == kShtNobits)
            continue;
        const uint64_t entry = s.entsize ? s.entsize : 16;
        const uint8_t* code = m_bytes.data() + s.offset;
        for (uint64_t i = 0; i + 6 <= s.size; ++i) {
            if (code[i] != 0xFF || code[i + 1] != 0x25)
                continue;
            int32_t disp = 0;
            std::memcpy(&disp, code + i + 2, 4);
            if (s.addr + i + 6 + static_cast<uint64_t>(static_cast<int64_t>(disp)) == gotSlot)
                return s.addr + (i / entry) * entry;
        }
    }
    return 0;
}

std::vector<const ElfSymbol*> ElfFile::callersOf(const std::string& symbol) const {
    std::vector<const ElfSymbol*> callers;
    if (m_machine != kEmX86_64)
        return callers;
    std::set<uint64_t> targets;
    for (uint64_t slot : gotSlotsOf(symbol)) {
        targets.insert(slot);
        if (const uint64_t plt = pltEntryFor(slot))
            targets.insert(plt);
    }
    for (const auto& fn : m_symtab) {
        if (fn.type != kSttFunc || fn.undefined() || fn.size == 0)
            continue;
        const uint8_t* code = bytesAt(fn.value, fn.size);
        if (!code)
            continue;
        bool calls = false;
        scanX86References(code, fn.value, fn.size, [&](uint64_t, uint64_t target, bool) {
            if (targets.count(target))
                calls = true;
        });
        if (calls)
            callers.push_back(&fn);
    }
    return callers;
}

bool ElfFile::isReferenced(uint64_t addr) const {
    bool referenced = false;
    for (const auto& s : m_sections) {
        if (!(s.flags & kShfExecinstr) || s.type == kShtNobits || startsWith(s.name, ".plt"))
            continue;
        scanX86References(m_bytes.data() + s.offset, s.addr, s.size,
                          [&](uint64_t, uint64_t target, bool) {
                              if (target == addr)
                                  referenced = true;
                          });
    }
    for (const auto& s : m_sections) {
        if (s.type != kShtRela)
            continue;
        for (const auto& r : readRelocs(s)) {
            if (static_cast<uint64_t>(r.addend) == addr)
                referenced = true;
        }
    }
    return referenced;
}

bool ElfFile::isDeviceFunctionHostStub(const ElfSymbol& fn) const {
    // nvcc replaces the host copy of every non-inline __device__ function with
    // `{ int volatile ___ = 1; ::exit(___); }`: a tiny local function ending in a call to exit
    // that nothing calls. Host code a candidate wrote to call exit is reachable, so it is not.
    if (m_machine != kEmX86_64 || fn.binding != kStbLocal || fn.type != kSttFunc || fn.size == 0 ||
        fn.size > 32)
        return false;
    const uint8_t* code = bytesAt(fn.value, fn.size);
    if (!code || fn.size < 5 || code[fn.size - 5] != 0xE8)
        return false;
    int references = 0;
    scanX86References(code, fn.value, fn.size, [&](uint64_t, uint64_t, bool) { ++references; });
    return references == 1 && !isReferenced(fn.value);
}

json::Value toJson(const Check& check) {
    json::Value v = json::Value::object();
    v["name"] = check.name;
    v["ok"] = check.ok;
    v["evidence"] = check.evidence;
    return v;
}

LintResult lintElf(const ElfFile& elf) {
    LintResult result;

    // Undefined dynamic symbols.
    {
        Check c{"undefined_symbols", true, ""};
        std::vector<std::string> allowed, refused;
        for (const auto& sym : elf.dynamicSymbols()) {
            if (!sym.undefined() || sym.name.empty())
                continue;
            bool ok = undefinedAllowed(sym);
            if (!ok && sym.name == "exit") {
                const auto callers = elf.callersOf("exit");
                ok = !callers.empty() &&
                     std::all_of(callers.begin(), callers.end(), [&](const ElfSymbol* fn) {
                         return elf.isDeviceFunctionHostStub(*fn);
                     });
                if (ok) {
                    allowed.push_back(sym.display() + " (only in nvcc's host stubs of __device__ "
                                                      "functions)");
                    continue;
                }
            }
            if (ok) {
                allowed.push_back(sym.display());
                continue;
            }
            refused.push_back(sym.display());
            std::string v = "undefined symbol " + sym.display();
            if (!sym.library.empty())
                v += " (from " + sym.library + ")";
            v += " is not allowed";
            result.violations.push_back(v);
        }
        c.ok = refused.empty();
        if (c.ok)
            c.evidence = std::to_string(allowed.size()) +
                         " undefined symbols, all allowed: " + joinNames(allowed);
        else
            c.evidence = "not allowed: " + joinNames(refused) + "; allowed: " + joinNames(allowed);
        if (!elf.neededLibraries().empty())
            c.evidence += "; needs " + joinNames(elf.neededLibraries());
        result.checks.push_back(c);
    }

    // Exported symbols.
    {
        Check c{"exported_symbols", true, ""};
        std::vector<std::string> exports, refused;
        bool hasLaunch = false;
        for (const auto& sym : elf.dynamicSymbols()) {
            if (sym.undefined() || sym.name.empty() || sym.binding == kStbLocal)
                continue;
            if (sym.binding != kStbGlobal && sym.binding != kStbWeak &&
                sym.binding != kStbGnuUnique)
                continue;
            if (sym.name == "kevolve_launch")
                hasLaunch = true;
            if (exportAllowed(sym)) {
                exports.push_back(sym.name);
                continue;
            }
            refused.push_back(sym.name);
            result.violations.push_back("exports " + sym.name +
                                        ": only kevolve_launch, kevolve_workspace_bytes and weak "
                                        "C++ instantiations may be exported");
        }
        if (!hasLaunch)
            result.violations.push_back(
                "kevolve_launch is not exported (declare it extern \"C\" KEVOLVE_EXPORT)");
        c.ok = refused.empty() && hasLaunch;
        c.evidence = "exports: " + joinNames(exports);
        if (!refused.empty())
            c.evidence += "; not allowed: " + joinNames(refused);
        if (!hasLaunch)
            c.evidence += "; kevolve_launch missing";
        result.checks.push_back(c);
    }

    // Static constructors.
    {
        Check c{"static_constructors", true, ""};
        std::vector<std::string> entries;
        for (const auto& e : elf.initArray()) {
            const std::string name = e.symbol.empty() ? hex(e.address) + " (no symbol)" : e.symbol;
            entries.push_back(name);
            if (!initEntryAllowed(e.symbol)) {
                c.ok = false;
                result.violations.push_back("static constructor " + name +
                                            " in .init_array (code that runs when the library "
                                            "is loaded)");
            }
        }
        c.evidence =
            ".init_array: " + (entries.empty() ? std::string("empty") : joinNames(entries));
        result.checks.push_back(c);
    }

    lintLoadTime(elf, result);

    result.ok = result.violations.empty();
    return result;
}

LintResult lintObject(const std::string& soPath) {
    try {
        return lintElf(ElfFile::load(soPath));
    } catch (const ElfError& e) {
        LintResult r;
        r.error = e.what();
        r.violations.push_back(std::string("unreadable object: ") + e.what());
        r.checks.push_back({"undefined_symbols", false, e.what()});
        return r;
    }
}

} // namespace kev::lint
