#include "audit.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

namespace kev::audit {

namespace {

std::string describe(const ActivityRecord& r) {
    char buf[512];
    if (r.kind == Kind::Kernel) {
        std::snprintf(buf, sizeof buf,
                      "kernel %s (grid %d,%d,%d block %d,%d,%d, stream %u, "
                      "correlation %u)",
                      r.name.c_str(), r.gridX, r.gridY, r.gridZ, r.blockX, r.blockY, r.blockZ,
                      r.streamId, r.correlationId);
    } else {
        std::snprintf(buf, sizeof buf, "%s %s of %llu bytes (stream %u, correlation %u)",
                      toString(r.kind), r.name.c_str(), static_cast<unsigned long long>(r.bytes),
                      r.streamId, r.correlationId);
    }
    return buf;
}

double ms(uint64_t ns) {
    return static_cast<double>(ns) * 1e-6;
}

const json::Value& field(const json::Value& v, const char* key, const char* where) {
    const json::Value* f = v.find(key);
    if (!f) {
        throw std::runtime_error(std::string(where) + "." + key + ": missing");
    }
    return *f;
}

uint64_t uintField(const json::Value& v, const char* key, const char* where) {
    const json::Value& f = field(v, key, where);
    if (!f.isInt() || f.asInt() < 0) {
        throw std::runtime_error(std::string(where) + "." + key +
                                 ": expected a non-negative integer");
    }
    return f.asUint();
}

bool boolOr(const json::Value& v, const char* key, bool fallback) {
    const json::Value* f = v.find(key);
    return f && f->isBool() ? f->asBool() : fallback;
}

} // namespace

const char* toString(Kind kind) {
    switch (kind) {
    case Kind::Kernel:
        return "kernel";
    case Kind::Memcpy:
        return "memcpy";
    case Kind::Memset:
        return "memset";
    }
    return "kernel";
}

Verdict judge(const std::vector<ActivityRecord>& records, const Sample& sample,
              const Tolerance& tolerance) {
    Verdict v;
    std::vector<const ActivityRecord*> markers;
    for (const ActivityRecord& r : records) {
        if (r.kind == Kind::Kernel && r.name == sample.markerName) {
            markers.push_back(&r);
        }
    }
    if (markers.size() != 2) {
        v.complete = false;
        v.incomplete = "expected the harness's two marker kernels in the trace, found " +
                       std::to_string(markers.size()) +
                       " (activity records lost or tracing did not start)";
        return v;
    }
    std::sort(markers.begin(), markers.end(), [](const ActivityRecord* a, const ActivityRecord* b) {
        return a->correlationId < b->correlationId;
    });
    const ActivityRecord& begin = *markers[0];
    const ActivityRecord& end = *markers[1];

    std::vector<const ActivityRecord*> sorted;
    for (const ActivityRecord& r : records) {
        sorted.push_back(&r);
    }
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const ActivityRecord* a, const ActivityRecord* b) {
                         return a->correlationId < b->correlationId;
                     });

    uint64_t firstStart = UINT64_MAX, lastEnd = 0, busy = 0;
    for (const ActivityRecord* p : sorted) {
        const ActivityRecord& r = *p;
        if (r.kind == Kind::Kernel && r.name == sample.markerName) {
            continue;
        }
        const bool before = r.correlationId < begin.correlationId;
        const bool after = r.correlationId > end.correlationId;
        if (r.kind != Kind::Kernel) {
            // Whatever the harness issued before the sample began is its own (flush, poison).
            if (!before) {
                v.violations.push_back(describe(r) + ": the harness issues no copy or set while "
                                                     "auditing, so the candidate did");
            }
            continue;
        }
        const bool candidate = sample.candidateKernels.count(r.name) != 0;
        const bool harness = !candidate && sample.harnessKernels.count(r.name) != 0;
        if (r.deviceLaunched && !before) {
            v.violations.push_back(describe(r) +
                                   " was launched from the device (dynamic parallelism), outside "
                                   "the audited launch path");
        }
        if (r.accessPolicyWindow && !before) {
            v.violations.push_back(describe(r) + " sets an L2 access-policy window");
        }
        if (before) {
            if (candidate && r.endNs > begin.startNs) {
                v.violations.push_back(describe(r) +
                                       " was launched before the sample and was still running "
                                       "when it began");
            }
            continue;
        }
        if (after) {
            if (!harness) {
                v.violations.push_back(describe(r) + " was launched after kevolve_launch returned");
            }
            continue;
        }
        if (std::find(v.kernelNames.begin(), v.kernelNames.end(), r.name) == v.kernelNames.end()) {
            v.kernelNames.push_back(r.name);
        }
        if (!candidate) {
            v.violations.push_back(describe(r) +
                                   (harness ? " is a harness kernel, launched from inside "
                                              "kevolve_launch"
                                            : " is not from the candidate's module (a library's "
                                              "kernel?)"));
            continue;
        }
        if (r.streamId != sample.harnessStreamId) {
            v.violations.push_back(describe(r) + " is on stream " + std::to_string(r.streamId) +
                                   ", not the harness stream " +
                                   std::to_string(sample.harnessStreamId));
            continue;
        }
        if (r.endNs > end.startNs && end.startNs > 0) {
            v.violations.push_back(describe(r) +
                                   " was still running when the harness's end marker started");
        }
        ++v.candidateKernels;
        firstStart = std::min(firstStart, r.startNs);
        lastEnd = std::max(lastEnd, r.endNs);
        busy += r.endNs > r.startNs ? r.endNs - r.startNs : 0;
    }

    CrossCheck& c = v.crossCheck;
    c.eventMs = sample.eventMs;
    c.busyMs = ms(busy);
    c.spanMs = v.candidateKernels > 0 && lastEnd > firstStart ? ms(lastEnd - firstStart) : 0.0;
    char note[320];
    if (v.candidateKernels == 0) {
        c.ok = false;
        c.note = "no kernel of the candidate ran on the harness stream during the sample";
    } else if (c.eventMs < c.busyMs * tolerance.shortFraction) {
        c.ok = false;
        std::snprintf(note, sizeof note,
                      "the events measured %.4f ms but the candidate's kernels ran %.4f ms: work "
                      "escaped the timed region",
                      c.eventMs, c.busyMs);
        c.note = note;
    } else if (c.eventMs > c.spanMs * tolerance.longFactor + tolerance.slackMs) {
        c.ok = false;
        std::snprintf(note, sizeof note,
                      "the events measured %.4f ms but the candidate's kernels spanned %.4f ms: "
                      "the timed region holds gaps with no candidate kernel running",
                      c.eventMs, c.spanMs);
        c.note = note;
    } else {
        std::snprintf(note, sizeof note,
                      "events %.4f ms, kernels busy %.4f ms over a span of %.4f ms", c.eventMs,
                      c.busyMs, c.spanMs);
        c.note = note;
    }
    return v;
}

json::Value toJson(const ActivityRecord& r) {
    json::Value v = json::Value::object();
    v["kind"] = toString(r.kind);
    v["name"] = r.name;
    v["stream"] = r.streamId;
    v["correlation"] = r.correlationId;
    v["start_ns"] = r.startNs;
    v["end_ns"] = r.endNs;
    if (r.kind == Kind::Kernel) {
        json::Value grid = json::Value::array();
        grid.push(r.gridX);
        grid.push(r.gridY);
        grid.push(r.gridZ);
        v["grid"] = grid;
        json::Value block = json::Value::array();
        block.push(r.blockX);
        block.push(r.blockY);
        block.push(r.blockZ);
        v["block"] = block;
        v["device_launched"] = r.deviceLaunched;
        v["access_policy_window"] = r.accessPolicyWindow;
    } else {
        v["bytes"] = r.bytes;
    }
    return v;
}

ActivityRecord recordFromJson(const json::Value& v) {
    const char* where = "record";
    if (!v.isObject()) {
        throw std::runtime_error("record: expected an object");
    }
    ActivityRecord r;
    const json::Value& kind = field(v, "kind", where);
    if (!kind.isString()) {
        throw std::runtime_error("record.kind: expected a string");
    }
    if (kind.asString() == "kernel") {
        r.kind = Kind::Kernel;
    } else if (kind.asString() == "memcpy") {
        r.kind = Kind::Memcpy;
    } else if (kind.asString() == "memset") {
        r.kind = Kind::Memset;
    } else {
        throw std::runtime_error("record.kind: \"" + kind.asString() +
                                 "\" is not one of kernel, memcpy, memset");
    }
    const json::Value& name = field(v, "name", where);
    if (!name.isString()) {
        throw std::runtime_error("record.name: expected a string");
    }
    r.name = name.asString();
    r.streamId = static_cast<uint32_t>(uintField(v, "stream", where));
    r.correlationId = static_cast<uint32_t>(uintField(v, "correlation", where));
    r.startNs = uintField(v, "start_ns", where);
    r.endNs = uintField(v, "end_ns", where);
    if (r.endNs < r.startNs) {
        throw std::runtime_error("record.end_ns: before start_ns");
    }
    if (const json::Value* b = v.find("bytes"); b && b->isInt()) {
        r.bytes = b->asUint();
    }
    if (const json::Value* g = v.find("grid"); g && g->isArray() && g->size() == 3) {
        r.gridX = static_cast<int>(g->at(0).asInt());
        r.gridY = static_cast<int>(g->at(1).asInt());
        r.gridZ = static_cast<int>(g->at(2).asInt());
    }
    if (const json::Value* b = v.find("block"); b && b->isArray() && b->size() == 3) {
        r.blockX = static_cast<int>(b->at(0).asInt());
        r.blockY = static_cast<int>(b->at(1).asInt());
        r.blockZ = static_cast<int>(b->at(2).asInt());
    }
    r.deviceLaunched = boolOr(v, "device_launched", false);
    r.accessPolicyWindow = boolOr(v, "access_policy_window", false);
    return r;
}

json::Value toJson(const Sample& s) {
    json::Value v = json::Value::object();
    v["harness_stream"] = s.harnessStreamId;
    v["marker"] = s.markerName;
    json::Value c = json::Value::array();
    for (const std::string& n : s.candidateKernels) {
        c.push(n);
    }
    v["candidate_kernels"] = c;
    json::Value h = json::Value::array();
    for (const std::string& n : s.harnessKernels) {
        h.push(n);
    }
    v["harness_kernels"] = h;
    v["event_ms"] = s.eventMs;
    return v;
}

Sample sampleFromJson(const json::Value& v) {
    const char* where = "sample";
    if (!v.isObject()) {
        throw std::runtime_error("sample: expected an object");
    }
    Sample s;
    s.harnessStreamId = static_cast<uint32_t>(uintField(v, "harness_stream", where));
    const json::Value& marker = field(v, "marker", where);
    if (!marker.isString()) {
        throw std::runtime_error("sample.marker: expected a string");
    }
    s.markerName = marker.asString();
    for (const char* key : {"candidate_kernels", "harness_kernels"}) {
        const json::Value& list = field(v, key, where);
        if (!list.isArray()) {
            throw std::runtime_error(std::string("sample.") + key + ": expected an array");
        }
        std::set<std::string>& into =
            std::string(key) == "candidate_kernels" ? s.candidateKernels : s.harnessKernels;
        for (const json::Value& e : list.elements()) {
            if (!e.isString()) {
                throw std::runtime_error(std::string("sample.") + key +
                                         ": expected kernel names (strings)");
            }
            into.insert(e.asString());
        }
    }
    const json::Value& ev = field(v, "event_ms", where);
    if (!ev.isNumber()) {
        throw std::runtime_error("sample.event_ms: expected a number");
    }
    s.eventMs = ev.asDouble();
    return s;
}

json::Value toJson(const Verdict& v) {
    json::Value o = json::Value::object();
    o["complete"] = v.complete;
    if (!v.complete) {
        o["incomplete"] = v.incomplete;
    }
    o["ok"] = v.complete && v.violations.empty();
    json::Value viol = json::Value::array();
    for (const std::string& s : v.violations) {
        viol.push(s);
    }
    o["violations"] = viol;
    o["candidate_kernels"] = v.candidateKernels;
    json::Value names = json::Value::array();
    for (const std::string& n : v.kernelNames) {
        names.push(n);
    }
    o["kernel_names"] = names;
    json::Value c = json::Value::object();
    c["event_ms"] = v.crossCheck.eventMs;
    c["busy_ms"] = v.crossCheck.busyMs;
    c["span_ms"] = v.crossCheck.spanMs;
    c["ok"] = v.crossCheck.ok;
    c["note"] = v.crossCheck.note;
    o["cross_check"] = c;
    return o;
}

} // namespace kev::audit
