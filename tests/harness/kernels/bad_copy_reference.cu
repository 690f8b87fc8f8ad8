// expect: incorrect
// Writes nothing, hoping the reference's output is already in C (as it would be in a harness that
// shares one output buffer between the reference and the candidate).
#include <kevolve/abi.h>

__global__ void idle() {}

extern "C" KEVOLVE_EXPORT int kevolve_launch(const KevolveArgs* args, cudaStream_t stream) {
    (void)args;
    idle<<<1, 32, 0, stream>>>();
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
