#pragma once
// The reference's hardware counters depend only on the device, the libraries, the task and the
// metric list: cached on disk under a key of all of them, they are profiled once, not per
// candidate.
#include "json.h"

#include <string>

namespace kev::refcache {

// The metrics fields that describe the reference (the ones a cache entry holds).
inline constexpr const char* kReferenceFields[] = {"reference", "reference_kernel",
                                                   "reference_kernels"};

// Everything the reference's counters depend on; a change of any of them misses the cache.
std::string referenceKey(const json::Value& childEnvironment, const json::Value& task,
                         const json::Value& options, const std::string& referenceSo);

// The cached reference metrics stored under `key` at `path`; null when absent or another key's.
json::Value loadReferenceCache(const std::string& path, const std::string& key);

// Stores the reference fields of `metrics` atomically (temporary file, then rename).
void storeReferenceCache(const std::string& path, const std::string& key,
                         const json::Value& metrics);

} // namespace kev::refcache
