/* A small shared object built next to the fuzz targets: the ELF lint's seed (a real ELF64 file
   with dynamic symbols, an undefined call and an .init_array entry). */
#include <stdlib.h>

static void* kept;

__attribute__((constructor)) static void start(void) {
    kept = malloc(16);
}

int kevolve_launch(const void* args, void* stream) {
    (void)args;
    (void)stream;
    return kept == 0;
}
