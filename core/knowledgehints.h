// What the knowledge store (knowledgestore.h) tells a new session: the best configurations of the
// nearest solved tasks and the human decisions made on nearby tasks. Value types only, so they
// cross from the engine to any agent (the built-in planner starts from them and avoids rejected
// regions; the LLM planner's prompt quotes the same lines). docs/knowledge.md.
#pragma once

#include "deviceinfo.h"
#include "strategy.h"
#include "task.h"

#include <QDateTime>
#include <QString>
#include <QStringList>
#include <QVector>

#include <optional>

namespace kev {

// The features a task is compared by: the op and its element types must match exactly; the shape
// and the device measure how near another task is.
struct TaskFeatures {
    QString taskName;
    QString op;
    QString dtypes; // "A:f16,B:f16,C:f32": every tensor's type in name order
    qint64 m = 0;
    qint64 n = 0;
    qint64 k = 0;
    QString deviceName;
    int smCount = 0;
    QString driver;

    static TaskFeatures of(const Task& task, const DeviceInfo& device);
    // "gemm 64x4096x11008 A:f16,B:f16,C:f32"
    QString shapeText() const;
};

// How far `other` is from `task`: the shapes' distance in octaves (the Euclidean norm of the
// log2 ratios of M, N and K), plus one octave for another device model and half an octave for the
// same model with another SM count. Empty when they cannot share knowledge (another op or
// another element type).
std::optional<double> featureDistance(const TaskFeatures& task, const TaskFeatures& other);

// One measured configuration of a nearby solved task, the best of that task.
struct KnowledgePrior {
    TaskFeatures task;
    double distance = 0;
    Strategy plan; // without rationale
    double speedup = 0;
    std::optional<double> percentOfFloor;
    QDateTime recordedAt;
    QString sessionId;
    int version = 0;

    // "from gemm_f16_m64_n4096_k11008 on NVIDIA H200: 1.12x, 2026-12-01 (wgmma_tma 128x256x64
    // w12 s4)"
    QString citation() const;
};

// A person's decision on a configuration of a nearby task.
struct KnowledgeDecision {
    enum class Kind { Rejected, EditedApproved };
    Kind kind = Kind::Rejected;
    TaskFeatures task;
    double distance = 0;
    Strategy plan;
    QString reason;   // the rejection's reason
    QString editDiff; // what the person changed, for an edited-and-approved kernel
    std::optional<double> speedup;
    QDateTime recordedAt;

    QString line() const;
};

struct KnowledgeHints {
    QString storePath;
    QVector<KnowledgePrior> priors;       // nearest task first, best configuration first
    QVector<KnowledgeDecision> decisions; // nearest task first

    bool isEmpty() const { return priors.isEmpty() && decisions.isEmpty(); }
    // Every prior's citation and every decision's line, as rationales and prompts quote them.
    QStringList lines() const;
    // The rejections only.
    QVector<KnowledgeDecision> rejections() const;
};

} // namespace kev
