#include "report.h"

#include "kevolve/harness_version.h"

#include <array>
#include <csignal>
#include <cstring>
#include <sstream>

namespace kev::report {

namespace {

constexpr size_t kStderrTail = 8u << 10;

uint32_t rotr(uint32_t x, int n) {
    return (x >> n) | (x << (32 - n));
}

constexpr std::array<uint32_t, 64> kRoundConstants = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

void compress(std::array<uint32_t, 8>& h, const uint8_t* block) {
    uint32_t w[64];
    for (int i = 0; i < 16; ++i)
        w[i] = (uint32_t{block[4 * i]} << 24) | (uint32_t{block[4 * i + 1]} << 16) |
               (uint32_t{block[4 * i + 2]} << 8) | uint32_t{block[4 * i + 3]};
    for (int i = 16; i < 64; ++i) {
        const uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
        const uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
    for (int i = 0; i < 64; ++i) {
        const uint32_t s1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
        const uint32_t ch = (e & f) ^ (~e & g);
        const uint32_t t1 = hh + s1 + ch + kRoundConstants[static_cast<size_t>(i)] + w[i];
        const uint32_t s0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
        const uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
        const uint32_t t2 = s0 + maj;
        hh = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
    h[5] += f;
    h[6] += g;
    h[7] += hh;
}

} // namespace

bool isStatus(std::string_view status) {
    for (const char* s : {"ok", "compile_error", "rule_violation", "runtime_error", "timeout",
                          "incorrect", "unstable", "no_device"}) {
        if (status == s)
            return true;
    }
    return false;
}

std::string sha256Hex(std::string_view bytes) {
    std::array<uint32_t, 8> h = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
    size_t full = bytes.size() / 64;
    for (size_t i = 0; i < full; ++i)
        compress(h, data + 64 * i);
    uint8_t tail[128] = {};
    const size_t rest = bytes.size() - 64 * full;
    std::memcpy(tail, data + 64 * full, rest);
    tail[rest] = 0x80;
    const size_t tailBlocks = rest + 9 > 64 ? 2 : 1;
    const uint64_t bits = static_cast<uint64_t>(bytes.size()) * 8;
    for (int i = 0; i < 8; ++i)
        tail[tailBlocks * 64 - 1 - static_cast<size_t>(i)] = static_cast<uint8_t>(bits >> (8 * i));
    for (size_t i = 0; i < tailBlocks; ++i)
        compress(h, tail + 64 * i);
    static const char* const hex = "0123456789abcdef";
    std::string out;
    for (uint32_t word : h) {
        for (int shift = 28; shift >= 0; shift -= 4)
            out += hex[(word >> shift) & 0xf];
    }
    return out;
}

json::Value kernelJson(const std::string& name, std::string_view source,
                       const std::string& language) {
    json::Value v = json::Value::object();
    v["name"] = name;
    v["sha256"] = sha256Hex(source);
    v["bytes"] = static_cast<uint64_t>(source.size());
    v["language"] = language;
    return v;
}

json::Value rulesJson(const Parts& parts) {
    json::Value rules = json::Value::object();
    json::Value checks = json::Value::array();
    json::Value violations = json::Value::array();
    if (parts.lint) {
        for (const auto& c : parts.lint->checks)
            checks.push(lint::toJson(c));
        for (const auto& v : parts.lint->violations)
            violations.push(v);
    }
    if (parts.child.isObject()) {
        if (const json::Value* c = parts.child.find("checks"); c && c->isArray()) {
            for (const auto& check : c->elements())
                checks.push(check);
        }
        if (const json::Value* v = parts.child.find("violations"); v && v->isArray()) {
            for (const auto& violation : v->elements())
                violations.push(violation);
        }
    }
    bool ok = violations.size() == 0;
    for (const auto& c : checks.elements()) {
        const json::Value* okField = c.find("ok");
        if (okField && okField->isBool() && !okField->asBool())
            ok = false;
    }
    rules["ok"] = ok;
    rules["lint"] = parts.lintEnabled;
    rules["checks"] = std::move(checks);
    rules["violations"] = std::move(violations);
    return rules;
}

json::Value mergeObjects(json::Value base, const json::Value& overrides) {
    if (!base.isObject() || !overrides.isObject())
        return overrides.isNull() ? base : overrides;
    for (const auto& [key, value] : overrides.members()) {
        json::Value* existing = base.find(key);
        if (existing)
            *existing = mergeObjects(*existing, value);
        else
            base[key] = value;
    }
    return base;
}

std::string reverifyCommand(const std::string& taskName, const std::string& kernelName,
                            bool selfCheck, bool lint) {
    std::string cmd = "kevolve-harness eval --task " + taskName + ".json --kernel " + kernelName;
    if (selfCheck)
        cmd += " --self-check";
    if (!lint)
        cmd += " --no-lint";
    return cmd;
}

json::Value assemble(const Parts& parts) {
    json::Value r = json::Value::object();
    r["schema_version"] = kSchemaVersion;
    r["kind"] = "kevolve.report";
    r["harness_version"] = KEVOLVE_HARNESS_VERSION;
    r["id"] = parts.id;
    r["status"] = parts.status;
    r["suspicious"] = parts.suspicious;
    r["message"] = parts.message;
    r["task"] = parts.task;
    r["kernel"] = parts.kernel;
    r["options"] = parts.options;
    json::Value environment = parts.environment;
    if (parts.child.isObject()) {
        if (const json::Value* env = parts.child.find("environment"))
            environment = mergeObjects(environment, *env);
    }
    r["environment"] = environment;
    if (parts.compile)
        r["compile"] = compile::toJson(*parts.compile);
    r["rules"] = rulesJson(parts);
    if (parts.child.isObject()) {
        for (const char* key :
             {"correctness", "timing", "roofline", "resources", "audit", "metrics"}) {
            if (const json::Value* v = parts.child.find(key); v && !v->isNull())
                r[key] = *v;
        }
    }
    r["stages"] = parts.stages;
    if (!parts.error.isNull())
        r["error"] = parts.error;
    r["reverify"] = parts.reverify;
    return r;
}

std::string firstErrorLine(const std::string& log) {
    std::istringstream in(log);
    std::string line;
    while (std::getline(in, line)) {
        if (line.find("error") != std::string::npos && line.find("ptxas info") == std::string::npos)
            return line;
    }
    return {};
}

ChildFailure childFailure(const process::Result& run, double timeoutS) {
    ChildFailure f;
    f.error = json::Value::object();
    f.error["stage"] = "run";
    if (!run.started) {
        f.status = "runtime_error";
        f.message = "could not start the GPU child: " + run.spawnError;
        f.error["message"] = f.message;
        return f;
    }
    if (run.timedOut) {
        std::ostringstream msg;
        msg << "the GPU child did not finish within " << timeoutS
            << " s (run_timeout_s) and was killed";
        f.status = "timeout";
        f.message = msg.str();
    } else if (!run.exited && run.signal == SIGSYS) {
        f.status = "rule_violation";
        f.message = "the sandbox killed the candidate: forbidden system call";
        f.violation = "forbidden system call (the sandbox's seccomp filter sent SIGSYS)";
    } else if (!run.exited) {
        f.status = "runtime_error";
        f.message =
            "the GPU child was killed by " + process::signalName(run.signal) + " without a result";
    } else {
        f.status = "runtime_error";
        f.message =
            "the GPU child exited with code " + std::to_string(run.exitCode) + " without a result";
    }
    if (run.channelRefused) {
        // The channel's framing broke (a flood, junk, an overlong line): that is the verdict,
        // whatever else happened (PROTOCOL.md, THREAT_MODEL.md class 8).
        const json::Value* v = run.channel.find("violation");
        const json::Value* m = v ? v->find("message") : nullptr;
        f.status = "rule_violation";
        f.message = "rule violation: the GPU child's result channel was refused: " +
                    (m && m->isString() ? m->asString() : std::string("broken framing"));
        f.violation = f.message;
        f.error["channel"] = run.channel;
    }
    f.error["message"] = f.message;
    if (run.signal != 0) {
        f.error["signal"] = run.signal;
        f.error["signal_name"] = process::signalName(run.signal);
    }
    if (run.exited)
        f.error["exit_code"] = run.exitCode;
    std::string tail = run.err;
    if (tail.size() > kStderrTail)
        tail = tail.substr(tail.size() - kStderrTail);
    f.error["stderr"] = tail;
    return f;
}

} // namespace kev::report
