// libFuzzer: the ELF64 reader of the static lint. Anything that is not a well-formed ELF64 file is
// an ElfError naming the problem; nothing is read out of bounds.
#include "elf_lint.h"

#include <cstddef>
#include <cstdint>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    try {
        const kev::lint::ElfFile elf =
            kev::lint::ElfFile::fromBytes(std::vector<uint8_t>(data, data + size), "fuzz.so");
        (void)elf.initArray();
        for (const char* symbol : {"malloc", "cudaMalloc", "fork", "pthread_create"}) {
            for (const kev::lint::ElfSymbol* fn : elf.callersOf(symbol))
                (void)elf.isDeviceFunctionHostStub(*fn);
        }
        for (const auto& s : elf.dynamicSymbols())
            (void)s.display();
    } catch (const kev::lint::ElfError&) {
    }
    return 0;
}
