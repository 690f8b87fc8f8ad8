// The GPU corpus (label gpu): every tests/harness/kernels/*.cu through ONE `kevolve-harness serve`,
// each ending in the status its header expects:
//   // expect: <status>       required
//   // task: <file>           in resources/tasks, default gemm_fp16_fp32_4096.json
//   // lint: off              evaluate with the static lint off (the child is the boundary)
//   // timeout: <s>           run_timeout_s for this kernel
// Exits 77 (skipped) when `kevolve-harness probe` finds no device. With $KEVOLVE_REPORT_DIR set,
// every report is appended to $KEVOLVE_REPORT_DIR/corpus.jsonl.
#include "report.h"
#include "serve_client.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

namespace fs = std::filesystem;
using kev::json::Value;

namespace {

struct Entry {
    std::string file;
    std::string expect;
    std::string task = "gemm_fp16_fp32_4096.json";
    bool lint = true;
    double timeoutS = 120;
    std::string problem; // a malformed header
    std::string got;
    std::string message;
    double speedup = 0;
    bool hasSpeedup = false;
    double seconds = 0;
};

std::string readText(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

std::string trim(std::string s) {
    while (!s.empty() && (s.back() == ' ' || s.back() == '\r' || s.back() == '\t'))
        s.pop_back();
    const size_t start = s.find_first_not_of(" \t");
    return start == std::string::npos ? std::string() : s.substr(start);
}

Entry parseHeader(const fs::path& file, const std::string& source) {
    Entry e;
    e.file = file.filename().string();
    std::istringstream in(source);
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("//", 0) != 0)
            break; // the header is the leading comment block
        const std::string body = trim(line.substr(2));
        const auto colon = body.find(':');
        if (colon == std::string::npos)
            continue;
        const std::string key = body.substr(0, colon);
        const std::string value = trim(body.substr(colon + 1));
        if (key == "expect")
            e.expect = value;
        else if (key == "task")
            e.task = value;
        else if (key == "lint")
            e.lint = value != "off";
        else if (key == "timeout")
            e.timeoutS = std::atof(value.c_str());
    }
    if (e.expect.empty())
        e.problem = "no '// expect: <status>' header";
    else if (!kev::report::isStatus(e.expect))
        e.problem = "'" + e.expect + "' is not a status";
    else if (!(e.timeoutS > 0))
        e.problem = "bad '// timeout:' header";
    return e;
}

int deviceCount() {
    kev::process::Spec s;
    s.argv = {KEVOLVE_HARNESS_EXE, "probe", "--json"};
    s.timeoutS = 60;
    const auto r = kev::process::run(s);
    auto v = kev::json::tryParse(r.out, nullptr);
    if (!v || !v->find("devices"))
        return 0;
    return static_cast<int>(v->find("devices")->size());
}

} // namespace

int main() {
    if (deviceCount() == 0) {
        std::cout << "corpus: no CUDA device (kevolve-harness probe lists none): skipped\n";
        return 77;
    }
    const fs::path source = KEVOLVE_SOURCE_DIR;
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(source / "tests/harness/kernels")) {
        if (entry.path().extension() == ".cu")
            files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    if (files.empty()) {
        std::cout << "corpus: no kernels in tests/harness/kernels\n";
        return 1;
    }

    std::ofstream jsonl;
    if (const char* dir = std::getenv("KEVOLVE_REPORT_DIR"); dir && *dir) {
        fs::create_directories(dir);
        jsonl.open(fs::path(dir) / "corpus.jsonl", std::ios::trunc);
    }

    // The user's keys in the server's environment must not reach a candidate
    // (bad_leak_key_nolint.cu looks for them).
    const std::vector<std::pair<std::string, std::string>> keys = {
        {"OPENAI_API_KEY", "kevolve-corpus-not-a-key"},
        {"KEVOLVE_API_KEY", "kevolve-corpus-not-a-key"}};
    kev::test::ServeClient server(keys);
    std::vector<Entry> entries;
    for (const auto& file : files) {
        const std::string text = readText(file);
        Entry e = parseHeader(file, text);
        if (e.problem.empty()) {
            Value req = kev::test::request("eval", e.file);
            req["task_path"] = (source / "resources/tasks" / e.task).string();
            req["kernel"]["language"] = "cuda";
            req["kernel"]["source"] = text;
            req["kernel"]["name"] = e.file;
            req["options"]["lint"] = e.lint;
            req["options"]["run_timeout_s"] = e.timeoutS;
            req["options"]["compile_timeout_s"] = 300;
            server.send(req);
        }
        entries.push_back(e);
    }

    bool allPassed = true;
    for (auto& e : entries) {
        if (!e.problem.empty()) {
            e.got = "(" + e.problem + ")";
            allPassed = false;
            continue;
        }
        // Compiles run in parallel and GPU runs one at a time: allow for the queue ahead.
        const double wait = 300 + e.timeoutS * 2 + 60.0 * static_cast<double>(entries.size());
        std::optional<Value> outcome;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(int(wait));
        while (!outcome && std::chrono::steady_clock::now() < deadline) {
            if (auto r = server.waitFor("result", Value(e.file), 1.0))
                outcome = r;
            else if (auto err = server.waitFor("error", Value(e.file), 0.0))
                outcome = err;
        }
        if (!outcome) {
            e.got = "(no answer)";
            allPassed = false;
            continue;
        }
        if (const Value* report = outcome->find("report")) {
            e.got = report->find("status")->asString();
            e.message = report->find("message") ? report->find("message")->asString() : "";
            if (const Value* timing = report->find("timing")) {
                if (const Value* s = timing->find("speedup_vs_reference"); s && s->isNumber()) {
                    e.speedup = s->asDouble();
                    e.hasSpeedup = true;
                }
            }
            if (const Value* stages = report->find("stages")) {
                for (const char* k : {"compile_s", "lint_s", "gpu_s"}) {
                    if (const Value* v = stages->find(k); v && v->isNumber())
                        e.seconds += v->asDouble();
                }
            }
            if (jsonl.is_open())
                jsonl << report->dump() << "\n";
        } else {
            e.got = "(error: " + outcome->find("message")->asString() + ")";
        }
        if (e.got != e.expect)
            allPassed = false;
    }

    server.send(kev::test::request("hello", "still-alive"));
    const bool alive = server.waitFor("hello", Value("still-alive"), 60).has_value();
    server.send(kev::test::request("shutdown", "end"));
    server.waitFor("bye", Value("end"), 60);

    std::printf("%-32s %-16s %-16s %9s %8s\n", "kernel", "expected", "got", "speedup", "seconds");
    for (const auto& e : entries) {
        char speedup[32] = "-";
        if (e.hasSpeedup)
            std::snprintf(speedup, sizeof speedup, "%.3f", e.speedup);
        std::printf("%-32s %-16s %-16s %9s %8.2f%s\n", e.file.c_str(), e.expect.c_str(),
                    e.got.c_str(), speedup, e.seconds, e.got == e.expect ? "" : "   <-- MISMATCH");
        if (e.got != e.expect && !e.message.empty())
            std::printf("    message: %s\n", e.message.c_str());
    }
    std::printf("server answered hello after the corpus: %s\n", alive ? "yes" : "NO");
    return allPassed && alive ? 0 : 1;
}
