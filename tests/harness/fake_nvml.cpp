// A stand-in for libnvidia-ml.so.1 with one fixed "H200", so the supervisor's NVML paths (probe,
// device selection, clock samples) run on machines without a GPU. Loaded through
// $KEVOLVE_NVML_LIBRARY.
#include <cstring>

namespace {

int g_dummy;
void* const kHandle = &g_dummy;

struct PciInfo {
    char busIdLegacy[16];
    unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
    char busId[32];
};

struct Memory {
    unsigned long long total, free, used;
};

int copy(char* dst, unsigned len, const char* src) {
    if (std::strlen(src) + 1 > len)
        return 7; // NVML_ERROR_INSUFFICIENT_SIZE
    std::strcpy(dst, src);
    return 0;
}

} // namespace

extern "C" {
__attribute__((visibility("default"))) int nvmlInit_v2() {
    return 0;
}
__attribute__((visibility("default"))) const char* nvmlErrorString(int) {
    return "fake error";
}
__attribute__((visibility("default"))) int nvmlSystemGetDriverVersion(char* v, unsigned n) {
    return copy(v, n, "999.99.99");
}
__attribute__((visibility("default"))) int nvmlSystemGetCudaDriverVersion_v2(int* v) {
    *v = 13000;
    return 0;
}
__attribute__((visibility("default"))) int nvmlDeviceGetCount_v2(unsigned* n) {
    *n = 1;
    return 0;
}
__attribute__((visibility("default"))) int nvmlDeviceGetHandleByIndex_v2(unsigned i, void** h) {
    if (i != 0)
        return 2; // NVML_ERROR_INVALID_ARGUMENT
    *h = kHandle;
    return 0;
}
__attribute__((visibility("default"))) int nvmlDeviceGetHandleByPciBusId_v2(const char* id,
                                                                            void** h) {
    if (std::strcmp(id, "00000000:19:00.0") != 0)
        return 6; // NVML_ERROR_NOT_FOUND
    *h = kHandle;
    return 0;
}
__attribute__((visibility("default"))) int nvmlDeviceGetIndex(void*, unsigned* i) {
    *i = 0;
    return 0;
}
__attribute__((visibility("default"))) int nvmlDeviceGetName(void*, char* s, unsigned n) {
    return copy(s, n, "Fake H200");
}
__attribute__((visibility("default"))) int nvmlDeviceGetUUID(void*, char* s, unsigned n) {
    return copy(s, n, "GPU-00000000-fake");
}
__attribute__((visibility("default"))) int nvmlDeviceGetPciInfo_v3(void*, PciInfo* p) {
    std::memset(p, 0, sizeof *p);
    std::strcpy(p->busId, "00000000:19:00.0");
    return 0;
}
__attribute__((visibility("default"))) int nvmlDeviceGetMemoryInfo(void*, Memory* m) {
    m->total = 150754820096ULL;
    m->free = m->total;
    m->used = 0;
    return 0;
}
__attribute__((visibility("default"))) int nvmlDeviceGetCudaComputeCapability(void*, int* major,
                                                                              int* minor) {
    *major = 9;
    *minor = 0;
    return 0;
}
__attribute__((visibility("default"))) int nvmlDeviceGetClockInfo(void*, int type, unsigned* mhz) {
    *mhz = type == 2 ? 3201 : 1980;
    return 0;
}
__attribute__((visibility("default"))) int nvmlDeviceGetMaxClockInfo(void*, int type,
                                                                     unsigned* mhz) {
    *mhz = type == 2 ? 3201 : 1980;
    return 0;
}
__attribute__((visibility("default"))) int nvmlDeviceGetEnforcedPowerLimit(void*, unsigned* mw) {
    *mw = 700000;
    return 0;
}
__attribute__((visibility("default"))) int nvmlDeviceGetTemperature(void*, int, unsigned* c) {
    *c = 35;
    return 0;
}
__attribute__((visibility("default"))) int nvmlDeviceGetPowerUsage(void*, unsigned* mw) {
    *mw = 120000;
    return 0;
}
__attribute__((visibility("default"))) int
nvmlDeviceGetCurrentClocksEventReasons(void*, unsigned long long* r) {
    *r = 0x4; // sw_power_cap: the normal state under load
    return 0;
}
}
