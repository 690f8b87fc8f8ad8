// Facts the built-in planner reasons with: device peaks for the roofline, and per family a prior
// expectation of its speed relative to the vendor library for a kind of task. Rules and data only;
// never a table of per-shape answers (the search finds those).
#ifndef KEV_BUILTIN_KNOWLEDGEBASE_H
#define KEV_BUILTIN_KNOWLEDGEBASE_H

#include "deviceinfo.h"
#include "task.h"

#include <QString>

namespace kev {

struct Roofline {
    double peakFlops = 0;     // FLOP/s of the math the task can use (tensor cores or FP32 FMA)
    double peakBytesPerS = 0; // DRAM bandwidth
    double intensity = 0;     // task FLOPs per minimum byte
    double ridge = 0;         // intensity where compute and memory times meet
    double floorSeconds = 0;  // max(compute time, memory time) at the peaks
    bool computeBound = false;
    QString text() const;
};

namespace knowledge {

// Peak FLOP/s for the task's math on the device: tensor cores for f16/bf16 inputs (dense), FP32
// FMA for f32 (no TF32). From SM count, a boost clock and per-SM throughput per architecture.
double peakFlops(const DeviceInfo& device, const Task& task);
// DRAM bandwidth in bytes/s, by product name, with a conservative default.
double peakBandwidth(const DeviceInfo& device);
Roofline roofline(const Task& task, const DeviceInfo& device);

// How fast a family usually runs relative to the reference library on a large, compute-bound
// problem of the task's kind (0..1): the starting belief of the planner's bandit, replaced by
// measurements as soon as the family has any.
double familyPrior(const QString& familyId, const Task& task);

// Whether the family implements a memory-bound op (rowwise, gemv, elementwise): its headline is
// the percentage of the DRAM floor, and the reviewer judges it by bytes in flight, not by reuse.
bool isMemoryBoundFamily(const QString& familyId);

// Whether a plan of `familyId` for `task` is judged by its share of the DRAM floor: a
// memory-bound family, or a GEMM of M <= 256 or below the roofline's ridge (the small-M
// inference GEMMs, whatever family runs them: B streams once and the tensor pipe waits for it).
bool isMemoryBoundPlan(const QString& familyId, const Task& task, const DeviceInfo& device);

// Whether the output has too few tiles of `tileM` x `tileN` to fill the device while K is long,
// the case split-K is for.
bool wantsSplitK(const Task& task, const DeviceInfo& device, int tileM = 128, int tileN = 128);

} // namespace knowledge
} // namespace kev

#endif // KEV_BUILTIN_KNOWLEDGEBASE_H
