#include "reference_cache.h"

#include "files.h"
#include "kevolve/harness_version.h"
#include "metrics.h"
#include "report.h"

#include <filesystem>
#include <optional>
#include <system_error>
#include <unistd.h>

namespace kev::refcache {

namespace fs = std::filesystem;

std::string referenceKey(const json::Value& childEnvironment, const json::Value& task,
                         const json::Value& options, const std::string& referenceSo) {
    std::string key = "kevolve reference metrics v1\nharness " KEVOLVE_HARNESS_VERSION "\n";
    for (const char* field : {"gpu", "driver_version", "cuda_runtime_version", "cublas_version"}) {
        const json::Value* v = childEnvironment.isObject() ? childEnvironment.find(field) : nullptr;
        if (v && v->isObject()) {
            const json::Value* uuid = v->find("uuid");
            key += std::string(field) + " " + (uuid ? uuid->dump() : v->dump()) + "\n";
        } else {
            key += std::string(field) + " " + (v ? v->dump() : std::string("?")) + "\n";
        }
    }
    key += "task " + task.dump() + "\n";
    const json::Value* metricList = options.isObject() ? options.find("metrics") : nullptr;
    key += "metrics " + (metricList ? metricList->dump() : std::string("default")) + "\n";
    if (!referenceSo.empty()) {
        const std::optional<std::string> bytes = files::readFile(referenceSo, nullptr);
        key += "reference library " + (bytes ? report::sha256Hex(*bytes) : referenceSo) + "\n";
    }
    return key;
}

json::Value loadReferenceCache(const std::string& path, const std::string& key) {
    const auto text = files::readFile(path, nullptr);
    const auto v = text ? json::tryParse(*text, nullptr) : std::nullopt;
    const json::Value* k = v && v->isObject() ? v->find("key") : nullptr;
    const json::Value* m = v && v->isObject() ? v->find("metrics") : nullptr;
    // The file is outside the child's reach (Landlock) but not outside every process's: counters
    // that cannot be real are profiled again.
    if (k && k->isString() && k->asString() == key && m && m->isObject() && m->find("reference") &&
        metrics::implausible(*m).empty())
        return *m;
    return json::Value();
}

void storeReferenceCache(const std::string& path, const std::string& key,
                         const json::Value& metrics) {
    json::Value entry = json::Value::object();
    entry["key"] = key;
    json::Value m = json::Value::object();
    for (const char* field : kReferenceFields) {
        if (const json::Value* v = metrics.find(field))
            m[field] = *v;
    }
    entry["metrics"] = std::move(m);
    std::error_code ec;
    fs::create_directories(fs::path(path).parent_path(), ec);
    const std::string tmp = path + ".tmp" + std::to_string(::getpid());
    if (files::writeFile(tmp, entry.dump(1)))
        fs::rename(tmp, path, ec);
}

} // namespace kev::refcache
