#pragma once
// The GPU child of kevolve-harness. The supervisor execs `kevolve-harness run-one --job JOB.json
// --result-fd 3`; this is the only code in the harness that initialises CUDA.
namespace kev::gpu {
// Returns the process exit code. Progress and the final result are JSON lines on the result fd.
int runOne(int argc, char** argv);
} // namespace kev::gpu
