#pragma once
// `kevolve-harness verify`: the trusted half of an evaluation (THREAT_MODEL.md, "The verifier").
// It never loads the candidate. It draws every seed from getrandom, generates the inputs, keeps
// their pristine copies and the fp64 truths in its own allocations, exports only the candidate's
// buffers to the runner (CUDA IPC), drives the runner over a pipe, checks the inputs after every
// call and every output against checks drawn after the output exists, times the reference in its
// own context, and writes the evaluation's verdict.
namespace kev::gpu {

// argv: verify --result-fd N --runner-in FD --runner-out FD [--hold-timing]; the job is the
// first line on stdin.
int verify(int argc, char** argv);

} // namespace kev::gpu
