#pragma once
// The host side's parallel loop. Work is cut into blocks whose size never depends on the thread
// count, and every block writes only its own results (or its own partial, combined afterwards in
// block order), so the results are bit-identical with 1 thread or 64.
#include <cstdint>
#include <functional>

namespace kev::ops {

// $KEVOLVE_HOST_THREADS when it is a positive number, else std::thread::hardware_concurrency().
int hostThreads();

// Calls f(b) once for every b in [0, blocks), on up to hostThreads() threads (the caller's
// included); blocks are handed out in increasing order. The first exception a block throws is
// rethrown once every thread has stopped.
void parallelFor(int64_t blocks, const std::function<void(int64_t)>& f);

// Rows per block for a row-wise pass over rows of `cols` elements: about 2^16 elements a block.
int64_t rowsPerBlock(int64_t cols);

} // namespace kev::ops
