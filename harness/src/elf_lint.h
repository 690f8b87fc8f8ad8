#pragma once
// The static lint of PROTOCOL.md, rule 1: reads the candidate's shared object (an ELF64 reader of
// our own, so the supervisor needs no binutils) and checks its undefined symbols, its exports and
// its .init_array against allowlists. It gives an early, clear rule_violation naming the symbols;
// the sandboxed child remains the real boundary.
#include "json.h"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace kev::lint {

class ElfError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct ElfSymbol {
    std::string name;
    std::string version; // "GLIBC_2.2.5", or empty
    std::string library; // the library a versioned undefined symbol is needed from, or empty
    uint64_t value = 0;
    uint64_t size = 0;
    uint8_t binding = 0; // STB_LOCAL 0, STB_GLOBAL 1, STB_WEAK 2, STB_GNU_UNIQUE 10
    uint8_t type = 0;    // STT_NOTYPE 0, STT_OBJECT 1, STT_FUNC 2, ...
    uint8_t visibility = 0;
    uint16_t section = 0; // SHN_UNDEF 0
    bool undefined() const { return section == 0; }
    // name@version, as nm prints it
    std::string display() const;
};

struct InitEntry {
    uint64_t address = 0;
    std::string symbol; // empty when no symbol is at that address
};

class ElfFile {
public:
    // Throws ElfError naming the problem for anything that is not a well-formed ELF64 file.
    static ElfFile load(const std::string& path);
    static ElfFile fromBytes(std::vector<uint8_t> bytes, const std::string& label);

    uint16_t machine() const { return m_machine; }
    const std::vector<ElfSymbol>& dynamicSymbols() const { return m_dynsym; }
    const std::vector<ElfSymbol>& staticSymbols() const { return m_symtab; }
    const std::vector<std::string>& neededLibraries() const { return m_needed; }
    // .init_array entries resolved to function names (relocations applied).
    std::vector<InitEntry> initArray() const;
    // Functions (from .symtab) whose code calls `symbol` through the PLT or the GOT; x86-64 only.
    std::vector<const ElfSymbol*> callersOf(const std::string& symbol) const;
    // Whether `fn` is nvcc's host copy of a __device__ function: a body that only calls exit(1).
    bool isDeviceFunctionHostStub(const ElfSymbol& fn) const;

    // What the loader reads (load-time code, elf_load_time.cpp).
    struct Section {
        std::string name;
        uint32_t type = 0;
        uint64_t flags = 0;
        uint64_t addr = 0;
        uint64_t offset = 0;
        uint64_t size = 0;
        uint32_t link = 0;
        uint32_t info = 0;
        uint64_t entsize = 0;
    };
    struct Reloc {
        uint64_t offset = 0;
        uint32_t type = 0;
        uint32_t symbol = 0; // index into dynamicSymbols()
        int64_t addend = 0;
    };
    struct Segment {
        uint32_t type = 0; // PT_TLS 7, ...
        uint64_t vaddr = 0;
        uint64_t filesz = 0;
        uint64_t memsz = 0;
    };
    struct DynamicEntry {
        int64_t tag = 0;
        uint64_t value = 0;
    };
    const std::vector<Section>& sections() const { return m_sections; }
    const Section* section(const std::string& name) const;
    const std::vector<DynamicEntry>& dynamic() const { return m_dynamic; }
    const std::vector<Segment>& segments() const { return m_segments; }
    // Every RELA relocation of the object.
    std::vector<Reloc> relocations() const;
    // The function pointers of an array (DT_INIT_ARRAY and the like) at `addr`, relocations
    // applied and resolved to names.
    std::vector<InitEntry> pointerArray(uint64_t addr, uint64_t size) const;
    // The defined function at exactly `addr`, or empty.
    std::string functionNameAt(uint64_t addr) const;
    // Bytes at virtual address `addr`, or nullptr when outside the file's loaded sections.
    const uint8_t* bytesAt(uint64_t addr, uint64_t len) const;
    // The PLT entry that jumps through `gotSlot`, or 0.
    uint64_t pltEntryFor(uint64_t gotSlot) const;

private:
    std::vector<ElfSymbol> readSymbols(const Section& symbols) const;
    std::vector<Reloc> readRelocs(const Section& s) const;
    void readVersions();
    std::string stringAt(const Section& strtab, uint64_t offset) const;
    template <typename T> T read(uint64_t offset) const;
    std::vector<uint64_t> gotSlotsOf(const std::string& symbol) const;
    bool isReferenced(uint64_t addr) const;

    std::string m_label;
    std::vector<uint8_t> m_bytes;
    uint16_t m_machine = 0;
    std::vector<Section> m_sections;
    std::vector<ElfSymbol> m_dynsym;
    std::vector<ElfSymbol> m_symtab;
    std::vector<std::string> m_needed;
    std::vector<DynamicEntry> m_dynamic;
    std::vector<Segment> m_segments;
};

struct Check {
    std::string name;
    bool ok = true;
    std::string evidence;
};

struct LintResult {
    bool ok = false;
    std::vector<Check> checks;
    std::vector<std::string> violations;
    std::string error; // the object could not be read: that is a violation too
};

LintResult lintObject(const std::string& soPath);
LintResult lintElf(const ElfFile& elf);
// The load_time_code check (elf_load_time.cpp): what runs when the object is loaded or unloaded
// outside kevolve_launch, read the way the loader reads it (the dynamic section and relocations):
// DT_INIT/DT_FINI must be the toolchain's crti/crtn bodies, DT_INIT_ARRAY/DT_FINI_ARRAY entries
// the toolchain's functions (and what they call only module registration), no DT_PREINIT_ARRAY,
// no IRELATIVE relocation or STT_GNU_IFUNC symbol (resolvers run at load), no thread_local with
// dynamic initialisation, no definition of a hook the toolchain's load-time code calls
// (__gmon_start__, _ITM_*, atexit, the nvcc registration functions), only the libraries the
// harness's link line gives. Appends its Check and violations to `result`.
void lintLoadTime(const ElfFile& elf, LintResult& result);

json::Value toJson(const Check& check);

// The allowlists, exposed for tests and for the report's evidence.
bool undefinedAllowed(const ElfSymbol& symbol);
bool exportAllowed(const ElfSymbol& symbol);
bool initEntryAllowed(const std::string& name);

} // namespace kev::lint
