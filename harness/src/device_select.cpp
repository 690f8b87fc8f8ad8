#include "device_select.h"

#include <cstdlib>
#include <vector>

namespace kev {

namespace {

std::vector<std::string> splitList(const std::string& text) {
    std::vector<std::string> parts;
    std::string current;
    for (char c : text + ",") {
        if (c == ',') {
            parts.push_back(current);
            current.clear();
        } else if (c != ' ') {
            current += c;
        }
    }
    return parts;
}

bool isIndex(const std::string& text) {
    if (text.empty() || text.size() > 6)
        return false;
    for (char c : text) {
        if (c < '0' || c > '9')
            return false;
    }
    return true;
}

std::string uuidOf(const json::Value& device) {
    const json::Value* uuid = device.find("uuid");
    return uuid && uuid->isString() ? uuid->asString() : std::string();
}

// NVML device by its NVML index.
std::string byNvmlIndex(const json::Value& devices, int index) {
    for (const auto& d : devices.elements()) {
        const json::Value* i = d.find("index");
        if (i && i->isInt() && i->asInt() == index)
            return uuidOf(d);
    }
    return {};
}

// CUDA's default order puts the fastest device first; NVML's is the PCI order. They agree when
// every device is the same model (ties are broken by PCI order) or when CUDA_DEVICE_ORDER says so.
bool ordersAgree(const json::Value& devices, const char* order) {
    if (order && std::string(order) == "PCI_BUS_ID")
        return true;
    std::string name;
    for (const auto& d : devices.elements()) {
        const json::Value* n = d.find("name");
        const std::string here = n && n->isString() ? n->asString() : std::string();
        if (here.empty() || (!name.empty() && here != name))
            return false;
        name = here;
    }
    return true;
}

} // namespace

std::string servedDeviceUuid(const json::Value& nvmlDevices, int cudaIndex, const char* visible,
                             const char* order) {
    if (!nvmlDevices.isArray() || cudaIndex < 0)
        return {};
    if (!visible)
        return ordersAgree(nvmlDevices, order) ? byNvmlIndex(nvmlDevices, cudaIndex)
                                               : std::string();
    // CUDA stops at the first entry it cannot parse; entries before it count.
    const std::vector<std::string> entries = splitList(visible);
    if (cudaIndex >= static_cast<int>(entries.size()))
        return {};
    for (int i = 0; i < cudaIndex; ++i) {
        if (entries[static_cast<size_t>(i)].empty())
            return {};
    }
    const std::string& entry = entries[static_cast<size_t>(cudaIndex)];
    if (isIndex(entry))
        return ordersAgree(nvmlDevices, order) ? byNvmlIndex(nvmlDevices, std::atoi(entry.c_str()))
                                               : std::string();
    if (entry.rfind("GPU-", 0) == 0) {
        // A unique prefix of a UUID names that device.
        std::string found;
        for (const auto& d : nvmlDevices.elements()) {
            const std::string uuid = uuidOf(d);
            if (uuid.rfind(entry, 0) == 0) {
                if (!found.empty())
                    return {};
                found = uuid;
            }
        }
        return found;
    }
    return {}; // MIG-..., or something CUDA would not accept
}

} // namespace kev
