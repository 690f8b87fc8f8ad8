#pragma once
// The values of kevolve/abi.h that the task rules need, without abi.h's CUDA headers: the task
// rules (task.cpp, json, files) build without the CUDA toolkit, because core links them to refuse
// what the harness would refuse. abi_check.cpp asserts that each equals abi.h's.
namespace kev::abi {

constexpr int kMaxTensors = 8;
constexpr int kMaxDims = 8;
constexpr int kMaxScalars = 4;

constexpr int kF32 = 0, kF16 = 1, kBF16 = 2, kF64 = 3, kI32 = 4, kI8 = 5;

constexpr int kOpGemm = 1, kOpGemv = 2, kOpSoftmax = 3, kOpLayernorm = 4, kOpReduce = 5,
              kOpElementwise = 6, kOpRmsnorm = 7, kOpCustom = 100;

} // namespace kev::abi
