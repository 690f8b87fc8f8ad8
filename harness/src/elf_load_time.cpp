// The lint's load_time_code check (elf_lint.h): code that runs when the candidate's library is
// loaded or unloaded, outside kevolve_launch and before the harness has armed its launch hooks.
// It reads what the loader reads: the dynamic section (DT_INIT, DT_FINI, DT_*_ARRAY, DT_NEEDED,
// audit and filter tags), the relocations (IRELATIVE: an IFUNC resolver runs while relocating),
// the symbols (STT_GNU_IFUNC, thread_local initialisers, the hooks crt and nvcc call) and the
// program headers (PT_TLS). What nvcc + g++ legitimately produce (read from real objects) passes:
// crti/crtn's _init/_fini, crtbegin's frame_dummy and __do_global_dtors_aux, nvcc's module
// registration and its atexit teardown.
#include "elf_code.h"
#include "elf_lint.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

namespace kev::lint {

namespace {

constexpr uint16_t kEmX86_64 = 62;
constexpr uint64_t kShfExecinstr = 0x4;
constexpr uint8_t kSttFunc = 2;
constexpr uint8_t kSttGnuIfunc = 10;
constexpr uint32_t kPtTls = 7;

constexpr int64_t kDtInit = 12;
constexpr int64_t kDtFini = 13;
constexpr int64_t kDtTextrel = 22;
constexpr int64_t kDtInitArray = 25;
constexpr int64_t kDtFiniArray = 26;
constexpr int64_t kDtInitArraySz = 27;
constexpr int64_t kDtFiniArraySz = 28;
constexpr int64_t kDtFlags = 30;
constexpr int64_t kDtPreinitArray = 32;
constexpr int64_t kDtPreinitArraySz = 33;
constexpr uint64_t kDfTextrel = 0x4;

std::string hex(uint64_t v) {
    std::ostringstream s;
    s << "0x" << std::hex << v;
    return s.str();
}

bool startsWith(const std::string& s, const char* prefix) {
    return s.compare(0, std::strlen(prefix), prefix) == 0;
}

// Dynamic tags that make the loader run or load something else.
const std::map<int64_t, const char*> kRefusedTags = {
    {kDtTextrel, "DT_TEXTREL (relocations that write the code)"},
    {kDtPreinitArray, "DT_PREINIT_ARRAY (code that runs before every constructor)"},
    {kDtPreinitArraySz, "DT_PREINIT_ARRAYSZ"},
    {0x6ffffefc, "DT_AUDIT (an audit library the loader runs)"},
    {0x6ffffefb, "DT_DEPAUDIT (an audit library the loader runs)"},
    {0x7fffffff, "DT_FILTER (another library loaded in its place)"},
    {0x7ffffffd, "DT_AUXILIARY (another library loaded in its place)"},
};

// The libraries the harness's link line gives a candidate (compile.cpp): anything else has
// constructors of its own.
bool neededAllowed(const std::string& lib) {
    for (const char* prefix :
         {"libcudart.so.", "libstdc++.so.", "libgcc_s.so.", "libc.so.", "libm.so.", "libdl.so.",
          "libpthread.so.", "librt.so.", "ld-linux-x86-64.so.", "ld-linux-aarch64.so."}) {
        if (startsWith(lib, prefix))
            return true;
    }
    return false;
}

// Relocation types a linked shared object carries; IRELATIVE (an IFUNC resolver) is refused.
bool relocationAllowed(uint16_t machine, uint32_t type) {
    if (machine == kEmX86_64) // 64, COPY, GLOB_DAT, JUMP_SLOT, RELATIVE, DTPMOD64, DTPOFF64,
        // TPOFF64, TLSDESC
        return type == 1 || (type >= 5 && type <= 8) || (type >= 16 && type <= 18) || type == 36;
    // AArch64: ABS64, COPY, GLOB_DAT, JUMP_SLOT, RELATIVE, TLS_DTPMOD, TLS_DTPREL, TLS_TPREL,
    // TLSDESC.
    return type == 257 || (type >= 1024 && type <= 1031);
}

std::string relocationName(uint16_t machine, uint32_t type) {
    if ((machine == kEmX86_64 && type == 37) || (machine != kEmX86_64 && type == 1032))
        return "IRELATIVE (an IFUNC resolver that runs while the library is relocated)";
    return "type " + std::to_string(type);
}

// crt's functions: present exactly once in every object g++ links; a second definition of one of
// these names is the candidate's.
const char* const kCrtFunctions[] = {"_init",
                                     "_fini",
                                     "frame_dummy",
                                     "register_tm_clones",
                                     "deregister_tm_clones",
                                     "__do_global_dtors_aux",
                                     "atexit"};

bool isCrtFunction(const std::string& name) {
    return std::any_of(std::begin(kCrtFunctions), std::end(kCrtFunctions),
                       [&](const char* n) { return name == n; });
}

// The identifier of a function without the mangling of a file-local one ("_ZL38__nv_x" ->
// "__nv_x"), so that only a name's own prefix counts, never a type in its signature.
std::string unmangledStatic(const std::string& name) {
    if (name.rfind("_ZL", 0) != 0)
        return name;
    size_t i = 3;
    size_t length = 0;
    while (i < name.size() && name[i] >= '0' && name[i] <= '9')
        length = length * 10 + static_cast<size_t>(name[i++] - '0');
    return i > 3 ? name.substr(i, length) : name;
}

// nvcc's generated registration code (its names are reserved to the implementation). A kernel
// stub whose signature names __nv_bfloat16 is not one of them: it must not be followed.
bool isNvccLoadFunction(const std::string& name) {
    const std::string id = unmangledStatic(name);
    // Reserved identifiers begin with two underscores or more (nvcc writes "__nv_..." and
    // "____nv_dummy_param_ref"); what follows them names the function.
    const size_t lead = id.find_first_not_of('_');
    if (lead == std::string::npos || lead < 2)
        return false;
    const std::string rest = id.substr(lead);
    return id == "__sti____cudaRegisterAll" || id == "__cudaUnregisterBinaryUtil" ||
           rest.rfind("nv_", 0) == 0 || rest.rfind("cudaRegister", 0) == 0;
}

// What load-time code may call outside the object.
const char* const kLoadTimeCallees[] = {"__cudaRegisterFatBinary",  "__cudaRegisterFatBinaryEnd",
                                        "__cudaRegisterFunction",   "__cudaRegisterVar",
                                        "__cudaRegisterManagedVar", "__cudaUnregisterFatBinary",
                                        "__cudaInitModule",         "__cudaRegisterTexture",
                                        "__cudaRegisterSurface",    "__cxa_atexit",
                                        "__cxa_finalize",           "atexit",
                                        "__gmon_start__",           "_ITM_deregisterTMCloneTable",
                                        "_ITM_registerTMCloneTable"};

bool loadTimeCalleeAllowed(const std::string& name) {
    return std::any_of(std::begin(kLoadTimeCallees), std::end(kLoadTimeCallees),
                       [&](const char* n) { return name == n; });
}

// Hooks the toolchain's load-time code calls when they are defined: the candidate must not
// define them (its definition would run at load).
bool isLoadTimeHook(const std::string& name) {
    return name != "atexit" && loadTimeCalleeAllowed(name);
}

// crti's _init: [endbr64] sub $8,%rsp; [mov __gmon_start__@GOT(%rip),%rax; test; je +2; call
// *%rax]; add $8,%rsp; ret. crtn's _fini: [endbr64] sub $8,%rsp; add $8,%rsp; ret.
bool matchesCrtBody(const uint8_t* code, uint64_t size, bool init, uint64_t* gotSlot,
                    uint64_t addr) {
    uint64_t i = 0;
    const auto take = [&](std::initializer_list<uint8_t> bytes) {
        if (i + bytes.size() > size || !std::equal(bytes.begin(), bytes.end(), code + i))
            return false;
        i += bytes.size();
        return true;
    };
    take({0xf3, 0x0f, 0x1e, 0xfa}); // endbr64, when built with CET
    if (!take({0x48, 0x83, 0xec, 0x08}))
        return false;
    if (init && i + 7 <= size && code[i] == 0x48 && code[i + 1] == 0x8b && code[i + 2] == 0x05) {
        int32_t disp = 0;
        std::memcpy(&disp, code + i + 3, 4);
        *gotSlot = addr + i + 7 + static_cast<uint64_t>(static_cast<int64_t>(disp));
        i += 7;
        if (!take({0x48, 0x85, 0xc0, 0x74, 0x02, 0xff, 0xd0}))
            return false;
    }
    return take({0x48, 0x83, 0xc4, 0x08, 0xc3}) && i == size;
}

class LoadTimeScan {
public:
    LoadTimeScan(const ElfFile& elf, std::vector<std::string>& problems)
        : m_elf(elf)
        , m_problems(problems) {
        for (const auto& r : elf.relocations()) {
            if (r.symbol != 0 && r.symbol < elf.dynamicSymbols().size()) {
                const std::string& name = elf.dynamicSymbols()[r.symbol].name;
                m_slotSymbol[r.offset] = name;
                if (const uint64_t plt = elf.pltEntryFor(r.offset))
                    m_pltSymbol[plt] = name;
            } else {
                m_slotTarget[r.offset] = static_cast<uint64_t>(r.addend);
            }
        }
    }

    // Follows what the function at `addr` calls; `root` names the entry for the evidence.
    void visit(uint64_t addr, const std::string& root) {
        const ElfSymbol* fn = functionContaining(addr);
        if (!fn) {
            m_problems.push_back(root + " runs code at " + hex(addr) + " outside every function");
            return;
        }
        if (!m_seen.insert(fn->value).second) {
            checkEntry(*fn, addr, root);
            return;
        }
        const bool crt = isCrtFunction(fn->name);
        if (!crt && !isNvccLoadFunction(fn->name)) {
            m_problems.push_back(root + " runs " + fn->name +
                                 ", which is not the toolchain's load-time code");
            return;
        }
        m_reached.push_back(fn->name);
        if (m_elf.machine() != kEmX86_64)
            return;
        if (!crt && fn->size == 0) {
            // Compiled functions have a size; a hand-written one hides its extent.
            m_problems.push_back(root + ": " + fn->name + " has no size (hand-written code)");
            return;
        }
        const uint8_t* code = m_elf.bytesAt(fn->value, fn->size);
        if (!code)
            return;
        // Decoded (or glibc's atexit, matched byte for byte): its instructions' references, and it
        // may be entered at an instruction start only. Else every byte pattern counts.
        std::vector<CodeRef> refs;
        bool exactRefs = true;
        if (auto exact = crt && fn->name == "atexit" ? atexitRefs(code, fn->value, fn->size)
                                                     : std::nullopt) {
            refs = std::move(*exact);
            m_starts[fn->value] = {0};
        } else if (auto decoded = decodeCode(code, fn->value, fn->size)) {
            refs = std::move(decoded->refs);
            m_starts[fn->value] = std::move(decoded->starts);
        } else {
            refs = scanCode(code, fn->value, fn->size);
            exactRefs = false;
        }
        checkEntry(*fn, addr, root);
        for (const CodeRef& ref : refs) {
            if (ref.kind == CodeRef::Syscall) {
                m_problems.push_back(root + ": " + fn->name + " makes a system call at " +
                                     hex(ref.target));
            } else if (ref.kind == CodeRef::Indirect) {
                // crt calls its hooks through registers (checked: they are not defined here);
                // unoptimised nvcc registration calls its callback, whose address it takes (below).
                continue;
            } else if (ref.kind == CodeRef::AddressTaken) {
                // Kernel stubs' addresses are registration keys, never called at load; nvcc's own
                // callbacks may be.
                const ElfSymbol* taken = functionContaining(ref.target);
                if (exactRefs && taken && taken != fn && taken->value != ref.target) {
                    // Compiled code takes a function's address, never the middle of another one:
                    // a jump through it would run whatever bytes lie there (an operand's too).
                    m_problems.push_back(root + ": " + fn->name + " takes the address " +
                                         hex(ref.target) + ", inside " + taken->name);
                } else if (taken && taken->value == ref.target && isNvccLoadFunction(taken->name)) {
                    visit(ref.target, root);
                }
            } else if (ref.kind == CodeRef::ThroughSlot) {
                callSlot(ref.target, root, *fn);
            } else if (ref.target < fn->value || ref.target >= fn->value + fn->size) {
                callAddress(ref.target, root, *fn);
            }
        }
    }

    const std::vector<std::string>& reached() const { return m_reached; }

private:
    // A decoded function entered anywhere but at one of its instructions would run the bytes of
    // an operand as code.
    void checkEntry(const ElfSymbol& fn, uint64_t addr, const std::string& root) {
        const auto it = m_starts.find(fn.value);
        if (it != m_starts.end() &&
            !std::binary_search(it->second.begin(), it->second.end(), addr - fn.value))
            m_problems.push_back(root + " enters " + fn.name + " at " + hex(addr) +
                                 ", inside one of its instructions");
    }

    const ElfSymbol* functionContaining(uint64_t addr) const {
        for (const auto& s : m_elf.staticSymbols()) {
            if (s.type == kSttFunc && !s.undefined() && addr >= s.value &&
                (addr < s.value + s.size || (s.size == 0 && addr == s.value)))
                return &s;
        }
        return nullptr;
    }

    bool inCode(uint64_t addr) const {
        for (const auto& s : m_elf.sections()) {
            if ((s.flags & kShfExecinstr) && addr >= s.addr && addr < s.addr + s.size)
                return true;
        }
        return false;
    }

    void callExternal(const std::string& name, const std::string& root, const ElfSymbol& from) {
        if (!loadTimeCalleeAllowed(name))
            m_problems.push_back(root + ": " + from.name + " calls " + name +
                                 " while the library is loaded");
    }

    void callSlot(uint64_t slot, const std::string& root, const ElfSymbol& from) {
        if (auto it = m_slotSymbol.find(slot); it != m_slotSymbol.end())
            callExternal(it->second, root, from);
        else if (auto t = m_slotTarget.find(slot); t != m_slotTarget.end())
            visit(t->second, root);
        // A slot no relocation fills is not a call a linker made: a misread pattern.
    }

    void callAddress(uint64_t target, const std::string& root, const ElfSymbol& from) {
        if (auto it = m_pltSymbol.find(target); it != m_pltSymbol.end()) {
            callExternal(it->second, root, from);
            return;
        }
        // Bytes that only look like a call land outside the code: a misread pattern.
        if (!inCode(target))
            return;
        for (const auto& s : m_elf.sections()) {
            if (startsWith(s.name, ".plt") && target >= s.addr && target < s.addr + s.size) {
                m_problems.push_back(root + ": " + from.name + " calls the PLT at " + hex(target) +
                                     ", which no relocation names");
                return;
            }
        }
        visit(target, root);
    }

    const ElfFile& m_elf;
    std::vector<std::string>& m_problems;
    std::map<uint64_t, std::string> m_slotSymbol;
    std::map<uint64_t, uint64_t> m_slotTarget;
    std::map<uint64_t, std::string> m_pltSymbol;
    std::set<uint64_t> m_seen;
    // Decoded functions: the offsets of their instructions, where they may be entered.
    std::map<uint64_t, std::vector<uint64_t>> m_starts;
    std::vector<std::string> m_reached;
};

std::string join(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& s : items)
        out += (out.empty() ? "" : ", ") + s;
    return out.empty() ? "none" : out;
}

} // namespace

void lintLoadTime(const ElfFile& elf, LintResult& result) {
    Check c{"load_time_code", true, ""};
    std::vector<std::string> problems;
    std::vector<std::string> facts;
    const bool x86 = elf.machine() == kEmX86_64;

    uint64_t init = 0, fini = 0, initArray = 0, initArraySz = 0, finiArray = 0, finiArraySz = 0;
    for (const auto& d : elf.dynamic()) {
        if (auto it = kRefusedTags.find(d.tag); it != kRefusedTags.end())
            problems.push_back("the dynamic section has " + std::string(it->second));
        if (d.tag == kDtFlags && (d.value & kDfTextrel))
            problems.push_back("the dynamic section has DF_TEXTREL (relocations that write the "
                               "code)");
        if (d.tag == kDtInit)
            init = d.value;
        else if (d.tag == kDtFini)
            fini = d.value;
        else if (d.tag == kDtInitArray)
            initArray = d.value;
        else if (d.tag == kDtInitArraySz)
            initArraySz = d.value;
        else if (d.tag == kDtFiniArray)
            finiArray = d.value;
        else if (d.tag == kDtFiniArraySz)
            finiArraySz = d.value;
    }
    for (const auto& lib : elf.neededLibraries()) {
        if (!neededAllowed(lib))
            problems.push_back("needs " + lib +
                               " (a library outside the harness's link line runs its own "
                               "constructors)");
    }

    // Hooks and crt names: defined once, by crt, or not at all.
    std::map<std::string, int> crtCount;
    for (const auto* table : {&elf.staticSymbols(), &elf.dynamicSymbols()}) {
        for (const auto& s : *table) {
            if (s.undefined() || s.name.empty())
                continue;
            if (s.type == kSttGnuIfunc)
                problems.push_back("IFUNC symbol " + s.name +
                                   " (its resolver runs while the library is loaded)");
            if (isLoadTimeHook(s.name))
                problems.push_back("defines " + s.name +
                                   ", which the toolchain's load-time code calls");
            if (startsWith(s.name, "_ZTH") || s.name == "__tls_init")
                problems.push_back("thread_local with dynamic initialisation (" + s.name + ")");
            if (table == &elf.staticSymbols() && s.type == kSttFunc && isCrtFunction(s.name))
                ++crtCount[s.name];
        }
    }
    for (const auto& [name, count] : crtCount) {
        if (count > 1)
            problems.push_back(std::to_string(count) + " functions named " + name +
                               " (the toolchain defines one)");
    }

    for (const auto& r : elf.relocations()) {
        if (!relocationAllowed(elf.machine(), r.type)) {
            problems.push_back("relocation " + relocationName(elf.machine(), r.type) + " at " +
                               hex(r.offset));
        }
    }
    for (const auto& seg : elf.segments()) {
        if (seg.type == kPtTls)
            facts.push_back("PT_TLS " + std::to_string(seg.filesz) + " initialised of " +
                            std::to_string(seg.memsz) + " bytes (data only)");
    }

    LoadTimeScan scan(elf, problems);
    // DT_INIT / DT_FINI: crti and crtn's bodies, nothing between them.
    for (const auto& [addr, isInit] : {std::pair<uint64_t, bool>{init, true}, {fini, false}}) {
        if (addr == 0)
            continue;
        const char* tag = isInit ? "DT_INIT" : "DT_FINI";
        const ElfFile::Section* s = elf.section(isInit ? ".init" : ".fini");
        if (!s || s->addr != addr) {
            problems.push_back(std::string(tag) + " points at " + hex(addr) +
                               ", not the start of " + (isInit ? ".init" : ".fini"));
            continue;
        }
        if (!x86) {
            facts.push_back(std::string(tag) + " (not verified on this architecture)");
            continue;
        }
        const uint8_t* code = elf.bytesAt(s->addr, s->size);
        uint64_t gotSlot = 0;
        if (!code || !matchesCrtBody(code, s->size, isInit, &gotSlot, s->addr)) {
            problems.push_back(std::string(tag) + ": " + s->name + " holds " +
                               std::to_string(s->size) +
                               " bytes that are not crti/crtn's (code added to " + s->name + ")");
            continue;
        }
        facts.push_back(std::string(tag) + " crt " + s->name);
    }

    // DT_INIT_ARRAY / DT_FINI_ARRAY, read the way the loader does, and what their entries call.
    for (const auto& [addr, size, tag] :
         {std::tuple<uint64_t, uint64_t, const char*>{initArray, initArraySz, "DT_INIT_ARRAY"},
          {finiArray, finiArraySz, "DT_FINI_ARRAY"}}) {
        if (addr == 0)
            continue;
        std::vector<std::string> names;
        for (const InitEntry& e : elf.pointerArray(addr, size)) {
            const std::string name = e.symbol.empty() ? hex(e.address) : e.symbol;
            names.push_back(name);
            if (e.address == 0) {
                problems.push_back(std::string(tag) + " entry " + name +
                                   " is resolved at load time (code outside this object)");
                continue;
            }
            const bool isInitArray = addr == initArray;
            if (isInitArray ? !initEntryAllowed(e.symbol) : e.symbol != "__do_global_dtors_aux") {
                problems.push_back(std::string(tag) + " entry " + name + " (code that runs when " +
                                   (isInitArray ? "the library is loaded" : "it is unloaded") +
                                   ")");
                continue;
            }
            scan.visit(e.address, std::string(tag) + " entry " + name);
        }
        facts.push_back(std::string(tag) + " [" + join(names) + "]");
    }
    facts.push_back("load-time functions: " + join(scan.reached()));

    std::sort(problems.begin(), problems.end());
    problems.erase(std::unique(problems.begin(), problems.end()), problems.end());
    for (const auto& p : problems)
        result.violations.push_back("load-time code: " + p);
    c.ok = problems.empty();
    c.evidence = join(facts);
    if (!c.ok)
        c.evidence = "refused: " + join(problems) + "; " + c.evidence;
    result.checks.push_back(c);
}

} // namespace kev::lint
