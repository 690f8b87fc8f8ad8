// The launch audit's judgement on synthetic activity records: a clean sample, a side stream, a
// library kernel, the candidate's own copy or set, a kernel launched after kevolve_launch returned,
// a device-side launch, missing markers, the event/activity cross-check, and the JSON form the
// recorded H200 fixtures use.
#include "audit.h"

#include <gtest/gtest.h>

using namespace kev;
using namespace kev::audit;

namespace {

constexpr uint32_t kStream = 13;
const char* const kMarker = "kevAuditMarker";
const char* const kGemm = "_Z9gemmTiledPK6__halfS1_Pflllll";

ActivityRecord kernel(const std::string& name, uint32_t corr, uint64_t start, uint64_t end,
                      uint32_t stream = kStream) {
    ActivityRecord r;
    r.kind = Kind::Kernel;
    r.name = name;
    r.correlationId = corr;
    r.startNs = start;
    r.endNs = end;
    r.streamId = stream;
    r.gridX = 128;
    r.gridY = r.gridZ = 1;
    r.blockX = 256;
    r.blockY = r.blockZ = 1;
    return r;
}

ActivityRecord copy(Kind kind, uint32_t corr, uint64_t bytes, uint32_t stream = kStream) {
    ActivityRecord r;
    r.kind = kind;
    r.name = kind == Kind::Memcpy ? "DtoD" : "device";
    r.correlationId = corr;
    r.bytes = bytes;
    r.streamId = stream;
    r.startNs = 1'100'000;
    r.endNs = 1'150'000;
    return r;
}

Sample sample(double eventMs) {
    Sample s;
    s.harnessStreamId = kStream;
    s.markerName = kMarker;
    s.candidateKernels = {kGemm, "_Z6splitKPf"};
    s.harnessKernels = {"_ZN3kev3gpu11blockStreamEPVKiyPi", "_ZN3kev3gpu10fillRandomEv"};
    s.eventMs = eventMs;
    return s;
}

// Markers at correlation 10 and 20 around a 1 ms candidate kernel.
std::vector<ActivityRecord> clean() {
    return {kernel(kMarker, 10, 999'000, 1'000'000), kernel(kGemm, 12, 1'000'500, 2'000'500),
            kernel(kMarker, 20, 2'001'000, 2'002'000)};
}

bool mentions(const Verdict& v, const std::string& what) {
    for (const std::string& s : v.violations) {
        if (s.find(what) != std::string::npos) {
            return true;
        }
    }
    return false;
}

} // namespace

TEST(Audit, CleanSamplePasses) {
    const Verdict v = judge(clean(), sample(1.01));
    EXPECT_TRUE(v.complete);
    EXPECT_TRUE(v.violations.empty()) << v.violations.front();
    EXPECT_EQ(v.candidateKernels, 1);
    EXPECT_EQ(v.kernelNames, std::vector<std::string>{kGemm});
    EXPECT_TRUE(v.crossCheck.ok) << v.crossCheck.note;
    EXPECT_NEAR(v.crossCheck.busyMs, 1.0, 1e-9);
    EXPECT_NEAR(v.crossCheck.spanMs, 1.0, 1e-9);
}

TEST(Audit, SideStreamIsAViolation) {
    auto r = clean();
    r[1].streamId = 7;
    const Verdict v = judge(r, sample(1.01));
    ASSERT_EQ(v.violations.size(), 1u);
    EXPECT_TRUE(mentions(v, "stream 7, not the harness stream 13")) << v.violations[0];
    EXPECT_TRUE(mentions(v, kGemm));
}

TEST(Audit, LibraryKernelIsNotFromTheCandidatesModule) {
    auto r = clean();
    r.insert(r.begin() + 2, kernel("sm90_xmma_gemm_f16f16_f32", 14, 1'000'600, 1'500'000));
    const Verdict v = judge(r, sample(1.01));
    EXPECT_TRUE(mentions(v, "sm90_xmma_gemm_f16f16_f32 (grid"));
    EXPECT_TRUE(mentions(v, "not from the candidate's module"));
}

TEST(Audit, HarnessKernelFromInsideTheEntryPointIsAViolation) {
    auto r = clean();
    r.push_back(kernel("_ZN3kev3gpu10fillRandomEv", 15, 1'600'000, 1'700'000));
    EXPECT_TRUE(mentions(judge(r, sample(1.01)), "is a harness kernel"));
}

TEST(Audit, CandidatesOwnCopyAndSetAreViolations) {
    auto r = clean();
    r.push_back(copy(Kind::Memcpy, 13, 4096));
    r.push_back(copy(Kind::Memset, 14, 64));
    const Verdict v = judge(r, sample(1.01));
    ASSERT_EQ(v.violations.size(), 2u);
    EXPECT_TRUE(mentions(v, "memcpy DtoD of 4096 bytes"));
    EXPECT_TRUE(mentions(v, "memset device of 64 bytes"));
}

TEST(Audit, HarnessCopiesBeforeTheSampleAreIgnored) {
    auto r = clean();
    r.push_back(copy(Kind::Memset, 5, 1 << 20)); // the L2 flush, issued before the begin marker
    r.push_back(kernel("_ZN3kev3gpu11blockStreamEPVKiyPi", 6, 900'000, 998'000));
    EXPECT_TRUE(judge(r, sample(1.01)).violations.empty());
}

TEST(Audit, KernelLaunchedAfterReturningIsCaught) {
    auto r = clean();
    // A second kernel of the candidate, launched later (a deferred launch or a host callback).
    r.push_back(kernel("_Z6splitKPf", 25, 2'100'000, 2'200'000));
    const Verdict v = judge(r, sample(1.01));
    ASSERT_EQ(v.violations.size(), 1u);
    EXPECT_TRUE(mentions(v, "launched after kevolve_launch returned"));
    EXPECT_TRUE(mentions(v, "_Z6splitKPf"));
}

TEST(Audit, KernelFromAnEarlierCallStillRunningIsCaught) {
    auto r = clean();
    r.push_back(kernel(kGemm, 3, 500'000, 1'200'000));
    EXPECT_TRUE(mentions(judge(r, sample(1.01)), "still running when it began"));
}

TEST(Audit, DeviceLaunchAndAccessPolicyWindowAreViolations) {
    auto r = clean();
    r[1].deviceLaunched = true;
    r[1].accessPolicyWindow = true;
    const Verdict v = judge(r, sample(1.01));
    EXPECT_TRUE(mentions(v, "dynamic parallelism"));
    EXPECT_TRUE(mentions(v, "access-policy window"));
}

TEST(Audit, MissingMarkersMakeTheTraceIncomplete) {
    auto r = clean();
    r.pop_back();
    const Verdict v = judge(r, sample(1.01));
    EXPECT_FALSE(v.complete);
    EXPECT_NE(v.incomplete.find("found 1"), std::string::npos) << v.incomplete;
    EXPECT_FALSE(toJson(v).find("ok")->asBool());
}

TEST(Audit, CrossCheckFlagsEventsShorterThanTheWork) {
    const Verdict v = judge(clean(), sample(0.5)); // events say 0.5 ms, the kernel ran 1 ms
    EXPECT_TRUE(v.violations.empty());
    EXPECT_FALSE(v.crossCheck.ok);
    EXPECT_NE(v.crossCheck.note.find("escaped"), std::string::npos) << v.crossCheck.note;
}

TEST(Audit, CrossCheckFlagsLargeGaps) {
    const Verdict v = judge(clean(), sample(3.0));
    EXPECT_FALSE(v.crossCheck.ok);
    EXPECT_NE(v.crossCheck.note.find("gaps"), std::string::npos) << v.crossCheck.note;
}

TEST(Audit, CrossCheckNeedsACandidateKernel) {
    auto r = clean();
    r.erase(r.begin() + 1);
    const Verdict v = judge(r, sample(0.01));
    EXPECT_FALSE(v.crossCheck.ok);
    EXPECT_EQ(v.candidateKernels, 0);
}

TEST(Audit, RecordsAndSamplesRoundTripThroughJson) {
    for (const ActivityRecord& r : clean()) {
        const ActivityRecord back = recordFromJson(json::parse(toJson(r).dump()));
        EXPECT_EQ(back.name, r.name);
        EXPECT_EQ(back.correlationId, r.correlationId);
        EXPECT_EQ(back.startNs, r.startNs);
        EXPECT_EQ(back.gridX, r.gridX);
    }
    const ActivityRecord c = recordFromJson(json::parse(toJson(copy(Kind::Memcpy, 3, 99)).dump()));
    EXPECT_EQ(c.kind, Kind::Memcpy);
    EXPECT_EQ(c.bytes, 99u);
    const Sample s = sampleFromJson(json::parse(toJson(sample(1.5)).dump()));
    EXPECT_EQ(s.candidateKernels, sample(1.5).candidateKernels);
    EXPECT_EQ(s.harnessStreamId, kStream);
    EXPECT_DOUBLE_EQ(s.eventMs, 1.5);
}

TEST(Audit, MalformedRecordsNameTheField) {
    try {
        recordFromJson(json::parse(R"({"kind":"graph","name":"x"})"));
        FAIL();
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("record.kind"), std::string::npos) << e.what();
    }
    try {
        recordFromJson(json::parse(
            R"({"kind":"kernel","name":"x","stream":1,"correlation":2,"start_ns":5,"end_ns":4})"));
        FAIL();
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("record.end_ns"), std::string::npos) << e.what();
    }
    EXPECT_THROW(sampleFromJson(json::parse(R"({"harness_stream":1})")), std::runtime_error);
}
