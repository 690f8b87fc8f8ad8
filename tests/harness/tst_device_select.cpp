// servedDeviceUuid: which GPU `serve --device N` measures on, from NVML's list and the CUDA
// environment Slurm or a user sets, or nothing when that cannot be told for sure.
#include "device_select.h"

#include <gtest/gtest.h>

namespace {

kev::json::Value devices(const char* text) {
    return kev::json::parse(text);
}

const char* const kTwoH200 = R"([
    {"index": 0, "name": "NVIDIA H200", "uuid": "GPU-aaaa1111-0000"},
    {"index": 1, "name": "NVIDIA H200", "uuid": "GPU-bbbb2222-0000"}])";

} // namespace

TEST(DeviceSelect, IndexWithoutVisibleDevicesIsNvmlsOnAHomogeneousHost) {
    EXPECT_EQ(kev::servedDeviceUuid(devices(kTwoH200), 0, nullptr, nullptr), "GPU-aaaa1111-0000");
    EXPECT_EQ(kev::servedDeviceUuid(devices(kTwoH200), 1, nullptr, nullptr), "GPU-bbbb2222-0000");
    EXPECT_EQ(kev::servedDeviceUuid(devices(kTwoH200), 2, nullptr, nullptr), "");
}

TEST(DeviceSelect, MixedModelsNeedPciOrder) {
    const auto mixed = devices(R"([
        {"index": 0, "name": "NVIDIA A100", "uuid": "GPU-a100"},
        {"index": 1, "name": "NVIDIA H200", "uuid": "GPU-h200"}])");
    // CUDA's default order puts the fastest first: index 0 may be the H200.
    EXPECT_EQ(kev::servedDeviceUuid(mixed, 0, nullptr, nullptr), "");
    EXPECT_EQ(kev::servedDeviceUuid(mixed, 0, nullptr, "PCI_BUS_ID"), "GPU-a100");
    EXPECT_EQ(kev::servedDeviceUuid(mixed, 0, "1", "PCI_BUS_ID"), "GPU-h200");
}

TEST(DeviceSelect, VisibleDevicesRenumber) {
    // Slurm's --gres=gpu:1 on the second GPU: CUDA's device 0 is NVML's 1.
    EXPECT_EQ(kev::servedDeviceUuid(devices(kTwoH200), 0, "1", nullptr), "GPU-bbbb2222-0000");
    EXPECT_EQ(kev::servedDeviceUuid(devices(kTwoH200), 1, "1", nullptr), "");
    EXPECT_EQ(kev::servedDeviceUuid(devices(kTwoH200), 1, "1, 0", nullptr), "GPU-aaaa1111-0000");
}

TEST(DeviceSelect, VisibleDevicesByUuidPrefix) {
    EXPECT_EQ(kev::servedDeviceUuid(devices(kTwoH200), 0, "GPU-bbbb", nullptr),
              "GPU-bbbb2222-0000");
    // A prefix two devices share names neither.
    EXPECT_EQ(kev::servedDeviceUuid(devices(kTwoH200), 0, "GPU-", nullptr), "");
    EXPECT_EQ(kev::servedDeviceUuid(devices(kTwoH200), 0, "GPU-cccc", nullptr), "");
}

TEST(DeviceSelect, UnknowableCasesAreEmpty) {
    EXPECT_EQ(kev::servedDeviceUuid(devices("[]"), 0, nullptr, nullptr), "");
    EXPECT_EQ(kev::servedDeviceUuid(devices(kTwoH200), 0, "MIG-1234", nullptr), "");
    EXPECT_EQ(kev::servedDeviceUuid(devices(kTwoH200), 0, "", nullptr), "");
    // CUDA stops at an entry it cannot parse; later entries are not visible.
    EXPECT_EQ(kev::servedDeviceUuid(devices(kTwoH200), 1, ",1", nullptr), "");
    EXPECT_EQ(kev::servedDeviceUuid(devices(kTwoH200), -1, nullptr, nullptr), "");
}
