// kevolve-harness: the referee's command line. See harness/PROTOCOL.md.
#include "kevolve/harness_version.h"

#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
    if (argc >= 2 && std::strcmp(argv[1], "--version") == 0) {
        std::printf("kevolve-harness %s\n", KEVOLVE_HARNESS_VERSION);
        return 0;
    }
    std::fprintf(stderr, "usage: kevolve-harness --version\n");
    return 2;
}
