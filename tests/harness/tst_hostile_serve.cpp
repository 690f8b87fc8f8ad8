// Issue 24: no line ends `kevolve-harness serve`. Each reproduction of the issue is here, first
// against the request reader in this process (parseRequestLine), then against the real server,
// which must answer every malformed line with an error event naming the problem and still answer
// `hello` afterwards.
#include "files.h"
#include "serve.h"
#include "serve_client.h"

#include "temp_dir.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

using kev::ServeRequest;
using kev::json::Value;
using kev::test::request;
using kev::test::ServeClient;
namespace fs = std::filesystem;

namespace {

std::string str(const Value* v) {
    return v && v->isString() ? v->asString() : std::string("<missing>");
}

std::string taskPath() {
    return std::string(KEVOLVE_SOURCE_DIR) + "/resources/tasks/gemm_fp16_fp32_4096.json";
}

// An eval request reading its kernel from `kernelPath`.
std::string evalWithKernelPath(const std::string& id, const std::string& kernelPath) {
    Value r = request("eval", id);
    r["task_path"] = taskPath();
    r["kernel"]["path"] = kernelPath;
    return r.dump();
}

std::string evalWithTaskPath(const std::string& id, const std::string& path) {
    Value r = request("eval", id);
    r["task_path"] = path;
    r["kernel"]["source"] = "// nothing";
    return r.dump();
}

std::string objectWithKeys(size_t n) {
    std::string s = R"({"v":1,"id":"keys","op":"hello")";
    for (size_t i = 0; i < n; ++i)
        s += ",\"k" + std::to_string(i) + "\":0";
    return s + "}";
}

std::string integerArray(size_t bytes) {
    std::string s = R"({"v":1,"id":"array","op":"hello","x":[1)";
    while (s.size() < bytes)
        s += ",1";
    return s + "]}";
}

std::string nested(int depth) {
    return R"({"v":1,"id":"deep","op":"hello","x":)" + std::string(depth, '[') +
           std::string(depth, ']') + "}";
}

// The error event a line gets; fails the test when the line is accepted.
Value errorOf(const std::string& line) {
    ServeRequest r = kev::parseRequestLine(line, 0);
    if (!r.error) {
        ADD_FAILURE() << "accepted: " << line.substr(0, 200);
        return Value::object();
    }
    EXPECT_EQ(r.op, ServeRequest::Op::None);
    EXPECT_FALSE(r.eval);
    return *r.error;
}

struct Fixture {
    kev::test::TempDir dir{"kev_hostile_serve"};
    std::string fifo = (dir / "fifo").string();
    std::string big = (dir / "big.cu").string();
    Fixture() {
        ::mkfifo(fifo.c_str(), 0600);
        std::ofstream(big).close();
        fs::resize_file(big, kev::files::kMaxSourceBytes + 1); // sparse: costs no disk
    }
};

} // namespace

TEST(HostileRequest, ProbeIsAnsweredNotACrash) {
    const ServeRequest r = kev::parseRequestLine(R"({"v":1,"id":"p","op":"probe"})", 0);
    EXPECT_FALSE(r.error);
    EXPECT_EQ(r.op, ServeRequest::Op::Probe);
    EXPECT_EQ(r.id, Value("p"));
    // The probe itself (what the server copies member by member into its event).
    const Value probe = kev::probeJson();
    EXPECT_TRUE(probe.find("devices") && probe.find("devices")->isArray());
}

TEST(HostileRequest, IntegersOutOfRangeNameTheirField) {
    for (const char* v : {"9223372036854775808", "18446744073709551615", "18446744073709551616",
                          "-9223372036854775809", "1e300", "1.5", "\"1\""}) {
        const Value e = errorOf(std::string(R"({"v":)") + v + R"(,"id":"x","op":"hello"})");
        EXPECT_EQ(str(e.find("code")), "unsupported_version") << v;
        const std::string message = str(e.find("message"));
        EXPECT_EQ(message.rfind("v: ", 0), 0u) << message;
        EXPECT_NE(message.find(" is not protocol version 1"), std::string::npos) << message;
        EXPECT_EQ(str(e.find("id")), "x");
    }
    for (const char* device : {"9223372036854775808", "18446744073709551616", "-1", "1025", "0.5",
                               "-9223372036854775809"}) {
        Value r = request("eval", "d");
        r["task_path"] = taskPath();
        r["kernel"]["source"] = "// k";
        const std::string line = r.dump();
        const std::string withDevice =
            line.substr(0, line.size() - 1) + R"(,"options":{"device":)" + device + "}}";
        const Value e = errorOf(withDevice);
        EXPECT_EQ(str(e.find("code")), "bad_request") << device;
        EXPECT_EQ(str(e.find("message"))
                      .rfind("options.device: expected a device index (0 to 1024), got ", 0),
                  0u)
            << device;
    }
}

TEST(HostileRequest, SizeAndNestingLimitsAreErrorsNamingTheLimit) {
    Value e = errorOf(objectWithKeys(100000));
    EXPECT_EQ(str(e.find("code")), "bad_request");
    EXPECT_NE(str(e.find("message")).find("an object with more than 4096 keys"), std::string::npos)
        << str(e.find("message"));
    e = errorOf(integerArray(size_t{16} << 20));
    EXPECT_NE(str(e.find("message")).find("an array with more than 65536 elements"),
              std::string::npos)
        << str(e.find("message"));
    e = errorOf(nested(65));
    EXPECT_NE(str(e.find("message")).find("nesting deeper than 64 levels"), std::string::npos);
    // Within the limits the same shapes are requests.
    EXPECT_FALSE(kev::parseRequestLine(nested(60), 0).error);
    EXPECT_FALSE(kev::parseRequestLine(objectWithKeys(4000), 0).error);

    Value longId = request("hello", std::string(kev::kMaxRequestId + 1, 'i'));
    e = errorOf(longId.dump());
    EXPECT_EQ(str(e.find("message")), "id: longer than 1024 bytes");
    Value bigSource = request("eval", "s");
    bigSource["task_path"] = taskPath();
    bigSource["kernel"]["source"] = std::string(kev::files::kMaxSourceBytes + 1, ' ');
    e = errorOf(bigSource.dump());
    EXPECT_EQ(str(e.find("message")), "kernel.source: 16.0 MiB, more than the limit of 16 MiB");
}

TEST(HostileRequest, KernelAndTaskPathsMustBeRegularFilesBelowALimit) {
    const Fixture f;
    const std::vector<std::pair<std::string, std::string>> kernels = {
        {f.fifo, "a FIFO, not a regular file"},
        {"/dev/zero", "a character device, not a regular file"},
        {"/dev/null", "a character device, not a regular file"},
        {f.dir.path().string(), "a directory, not a regular file"},
        {"/proc/self/mem", "cannot read: Input/output error"},
        {f.big, "16.0 MiB, more than the limit of 16 MiB"},
        {(f.dir / "missing.cu").string(), "no such file"},
    };
    for (const auto& [path, why] : kernels) {
        const Value e = errorOf(evalWithKernelPath("k", path));
        EXPECT_EQ(str(e.find("code")), "bad_request") << path;
        EXPECT_EQ(str(e.find("message")), "kernel.path: " + path + ": " + why);
    }
    const std::vector<std::pair<std::string, std::string>> tasks = {
        {f.fifo, "a FIFO, not a regular file"},
        {"/dev/zero", "a character device, not a regular file"},
        {f.dir.path().string(), "a directory, not a regular file"},
    };
    for (const auto& [path, why] : tasks) {
        const Value e = errorOf(evalWithTaskPath("t", path));
        EXPECT_EQ(str(e.find("code")), "bad_task") << path;
        EXPECT_EQ(str(e.find("message")), path + ": cannot read the task file (" + why + ")");
    }
    // A symbolic link to a device is judged by what it leads to.
    const std::string link = (f.dir / "link.cu").string();
    fs::create_symlink("/dev/zero", link);
    EXPECT_EQ(str(errorOf(evalWithKernelPath("l", link)).find("message")),
              "kernel.path: " + link + ": a character device, not a regular file");
}

TEST(HostileRequest, GarbageIsRefusedWithAReason) {
    const std::vector<std::string> lines = {
        std::string("\0\0\0", 3),
        "\xff\xfe{}",
        R"({"v":1,"id":"x","op":"hello","op":"probe"})",
        R"({"v":1,"id":5,"op":"hello"})",
        R"({"v":1,"id":"x","op":7})",
        R"({"v":1,"id":"x","op":"eval"})",
        R"({"v":1,"id":"x","op":"eval","task":5,"kernel":{"source":""}})",
        R"({"v":1,"id":"x","op":"eval","task_path":[],"kernel":{"source":""}})",
        R"({"v":1,"id":"x","op":"eval","task":{},"task_path":"a","kernel":{"source":""}})",
        R"({"v":1,"id":"x","op":"cancel","target":null})",
        R"({"v":1,"id":"x","op":"eval","task_path":"/etc/hostname","kernel":{"source":""}})",
        "{\"v\":1,\"id\":\"x\",\"op\":\"" + std::string(100000, 'z') + "\"}",
        "[" + std::string(1000, '[') + "]",
        "\"" + std::string(1000, '\\') + "\"",
        "1e99999",
    };
    for (const auto& line : lines) {
        const Value e = errorOf(line);
        EXPECT_EQ(str(e.find("event")), "error");
        EXPECT_FALSE(str(e.find("message")).empty());
        EXPECT_LT(str(e.find("message")).size(), 400u) << str(e.find("message"));
    }
}

TEST(HostileServe, EveryLineIsAnsweredAndTheServerStillSaysHello) {
    const Fixture f;
    ServeClient server;
    server.send(request("probe", "p"));
    auto probe = server.waitFor("probe", Value("p"), 60);
    ASSERT_TRUE(probe) << "the server died on probe";
    EXPECT_TRUE(probe->find("devices")->isArray());

    const std::vector<std::pair<std::string, std::string>> lines = {
        {R"({"v":9223372036854775808,"id":"v63","op":"hello"})", "v: 9223372036854775808"},
        {evalWithKernelPath("fifo", f.fifo), "a FIFO, not a regular file"},
        {evalWithTaskPath("tfifo", f.fifo), "a FIFO, not a regular file"},
        {evalWithKernelPath("zero", "/dev/zero"), "a character device"},
        {evalWithKernelPath("null", "/dev/null"), "a character device"},
        {evalWithKernelPath("mem", "/proc/self/mem"), "cannot read"},
        {evalWithKernelPath("dir", f.dir.path().string()), "a directory"},
        {objectWithKeys(100000), "more than 4096 keys"},
        {integerArray(size_t{16} << 20), "more than 65536 elements"},
        {nested(100000), "nesting deeper than 64 levels"},
    };
    for (const auto& [line, why] : lines) {
        ASSERT_TRUE(server.sendLine(line));
        auto e = server.next(60);
        ASSERT_TRUE(e) << "no answer to " << line.substr(0, 120);
        EXPECT_EQ(str(e->find("event")), "error") << e->dump();
        EXPECT_NE(str(e->find("message")).find(why), std::string::npos) << e->dump();
    }
    {
        Value r = request("eval", "dev");
        r["task_path"] = taskPath();
        r["kernel"]["source"] = "// k";
        const std::string line = r.dump();
        server.sendLine(line.substr(0, line.size() - 1) +
                        R"(,"options":{"device":18446744073709551616}})");
        auto e = server.next(60);
        ASSERT_TRUE(e);
        EXPECT_NE(str(e->find("message")).find("options.device"), std::string::npos);
    }
    server.send(request("hello", "alive"));
    EXPECT_TRUE(server.waitFor("hello", Value("alive"), 60));
    server.send(request("shutdown", "s"));
    EXPECT_TRUE(server.waitFor("bye", Value("s"), 60));
    const auto& result = server.wait(60);
    EXPECT_TRUE(result.exited);
    EXPECT_EQ(result.exitCode, 0);
}

// PROTOCOL.md: after end of input the server kills what is still running. The compiler here never
// finishes, so only a kill ends the evaluation; it is answered `cancelled`, never `result`.
TEST(HostileServe, EndOfInputKillsTheEvaluationInFlight) {
    const kev::test::TempDir dir("kev_hostile_eof");
    const fs::path nvcc = dir / "nvcc";
    std::ofstream(nvcc) << "#!/bin/sh\n"
                           "if [ \"$1\" = \"--version\" ]; then echo \"release 13.0, V13.0.88\"; "
                           "exit 0; fi\n"
                           "touch \"$KEV_MARK\"\nexec sleep 600\n";
    ::chmod(nvcc.c_str(), 0755);
    const std::string mark = (dir / "compiling").string();
    ServeClient server({{"KEVOLVE_NVCC", nvcc.string()},
                        {"KEV_MARK", mark},
                        // nvcc gets an allowlisted environment (THREAT_MODEL.md, class 9).
                        {"KEVOLVE_PASS_ENV", "KEV_MARK"},
                        {"KEVOLVE_ARCH", "90a"},
                        {"KEVOLVE_NVML_LIBRARY", KEVOLVE_FAKE_NVML}});
    Value r = request("eval", "slow");
    r["task_path"] = taskPath();
    r["kernel"]["source"] = "// never compiled";
    r["options"]["compile_timeout_s"] = 3600;
    server.send(r);
    ASSERT_TRUE(server.waitFor("accepted", Value("slow"), 60));
    // Wait until the compiler runs, so that end of input finds the evaluation in flight.
    for (int i = 0; i < 600 && !fs::exists(mark); ++i) {
        server.next(0.1);
    }
    ASSERT_TRUE(fs::exists(mark));
    server.closeInput();
    auto cancelled = server.waitFor("cancelled", Value("slow"), 120);
    EXPECT_TRUE(cancelled);
    auto bye = server.waitFor("bye", Value(), 120);
    EXPECT_TRUE(bye);
    const auto& result = server.wait(120);
    EXPECT_TRUE(result.exited);
    EXPECT_EQ(result.exitCode, 0);
    for (const auto& e : server.history())
        EXPECT_NE(str(e.find("event")), "result") << e.dump();
}
