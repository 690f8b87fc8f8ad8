// The supervisor's profiling child: started beside the evaluation, its counters merged into the
// report (harness/PROTOCOL.md, "Profiling").
#include "supervisor.h"
#include "supervisor_eval.h"

#include "metrics.h"
#include "report.h"
#include "roofline.h"
#include "reference_cache.h"
#include "result_channel.h"

#include <string>
#include <vector>

namespace kev {

using namespace supervisor_detail;

void Supervisor::handleProfileLine(Eval& e, process::Process& child, const std::string& line) {
    const auto m = e.profileProtocol->accept(child.channelReader(), line);
    if (!m)
        return;
    if (m->type == "ready" && e.timingHeld && &child == e.profileProc.get())
        releaseTiming(e);
    if (m->type == "reference_metrics" && e.trustedReference.isNull()) {
        const json::Value* metrics = m->value.find("metrics");
        e.trustedReference = metrics && metrics->isObject() ? *metrics : json::Value::object();
    }
    if (m->type == "result")
        e.profileResult = std::move(m->value);
}

void Supervisor::releaseTiming(Eval& e) {
    e.timingHeld = false;
    if (e.proc) {
        e.proc->writeStdin("time\n");
        e.proc->closeStdin();
    }
}

void Supervisor::startProfiling(Eval& e) {
    progress(e, "profile", "hardware counters of the candidate and the reference", 0.95);
    e.cachedReference = json::Value();
    e.referenceCachePath.clear();
    const std::string dir = roofline::cacheDir();
    if (!dir.empty()) {
        const json::Value* env = e.childResult.find("environment");
        e.referenceCacheKey = refcache::referenceKey(env ? *env : json::Value(), toJson(e.req.task),
                                                     e.req.options.toJson(), e.referenceSoPath);
        e.referenceCachePath = dir + "/reference-metrics-" +
                               report::sha256Hex(e.referenceCacheKey).substr(0, 32) + ".json";
        e.cachedReference = refcache::loadReferenceCache(e.referenceCachePath, e.referenceCacheKey);
    }
    const bool cached = e.cachedReference.isObject();
    if (e.profileProc && e.profileProc->running() &&
        e.profileProc->writeStdin(cached ? "go candidate-only\n" : "go\n")) {
        e.profileProc->closeStdin();
        e.proc = std::move(e.profileProc);
        e.token = e.profileToken;
    } else {
        // The waiting child is gone (or was never started): start one now.
        e.profileProc.reset();
        e.token = resultToken();
        e.profileProtocol.emplace(e.token, kProfileLineTypes);
        std::vector<std::string> args = {"--profile"};
        if (cached)
            args.push_back("--candidate-only");
        e.proc = spawnProfileChild(e, args, e.token, false, e.req.options.runTimeoutS);
    }
    e.profileGo = std::chrono::steady_clock::now();
    e.state = Eval::State::Profiling;
}

// Counters never change the verdict: a profiling child that fails leaves the reason in
// `metrics` and the report is otherwise the evaluation's.
void Supervisor::afterProfile(Eval& e) {
    const process::Result run = withChannel(*e.proc);
    e.proc.reset();
    e.profileS = secondsSince(e.profileGo);
    if (run.channelRefused) {
        // The candidate ran in this child too: a broken channel is its doing, not a counter.
        refuseChannel(e, run, "the profiling child");
        return;
    }
    e.profileHiddenS = std::max(0.0, run.seconds - e.profileS);
    json::Value metrics;
    if (const json::Value* m =
            e.profileResult.isObject() ? e.profileResult.find("metrics") : nullptr;
        m && m->isObject()) {
        metrics = *m;
    } else {
        metrics = json::Value::object();
        metrics["available"] = false;
        const report::ChildFailure f = report::childFailure(run, e.req.options.runTimeoutS);
        metrics["reason"] = "the profiling child ended without metrics: " + f.message;
    }
    const auto takeReference = [&metrics](const json::Value& from) {
        for (const char* field : refcache::kReferenceFields) {
            if (const json::Value* v = from.find(field))
                metrics[field] = *v;
        }
    };
    if (e.cachedReference.isObject()) {
        takeReference(e.cachedReference);
        metrics["reference_source"] = "cache " + e.referenceCachePath;
    } else if (e.trustedReference.isObject() && e.trustedReference.find("reference")) {
        // Counted before the candidate was loaded: these, not the result's copy (which passed
        // through the candidate's process), are reported and cached.
        takeReference(e.trustedReference);
        if (const json::Value* err = e.trustedReference.find("reference_error"))
            metrics["reference_error"] = *err;
        if (!e.referenceCachePath.empty() && !e.trustedReference.find("reference_error")) {
            refcache::storeReferenceCache(e.referenceCachePath, e.referenceCacheKey,
                                          e.trustedReference);
            metrics["reference_source"] =
                "profiled before the candidate was loaded (cached at " + e.referenceCachePath + ")";
        } else {
            metrics["reference_source"] = "profiled before the candidate was loaded";
        }
    } else if (metrics.find("reference")) {
        // Only the result carried them: the candidate could have changed them, so they are
        // shown but never cached.
        metrics["reference_source"] = "profiled (not cached: not reported before the candidate "
                                      "was loaded)";
    }
    e.childResult["metrics"] = std::move(metrics);
    finish(e, e.status, e.message);
}

} // namespace kev
