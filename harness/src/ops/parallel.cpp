#include "ops/parallel.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace kev::ops {

int hostThreads() {
    if (const char* env = std::getenv("KEVOLVE_HOST_THREADS")) {
        char* end = nullptr;
        const long n = std::strtol(env, &end, 10);
        if (end != env && *end == '\0' && n > 0)
            return static_cast<int>(std::min(n, 1024L));
    }
    return std::max(1u, std::thread::hardware_concurrency());
}

void parallelFor(int64_t blocks, const std::function<void(int64_t)>& f) {
    if (blocks <= 0)
        return;
    const int threads = static_cast<int>(std::min<int64_t>(hostThreads(), blocks));
    if (threads == 1) {
        for (int64_t b = 0; b < blocks; ++b)
            f(b);
        return;
    }
    std::atomic<int64_t> next{0};
    std::atomic<bool> failed{false};
    std::exception_ptr error;
    std::mutex errorMutex;
    const auto work = [&] {
        for (int64_t b = next++; b < blocks && !failed; b = next++) {
            try {
                f(b);
            } catch (...) {
                const std::lock_guard<std::mutex> lock(errorMutex);
                if (!error)
                    error = std::current_exception();
                failed = true;
            }
        }
    };
    std::vector<std::thread> pool;
    pool.reserve(static_cast<size_t>(threads - 1));
    for (int t = 1; t < threads; ++t)
        pool.emplace_back(work);
    work();
    for (std::thread& t : pool)
        t.join();
    if (error)
        std::rethrow_exception(error);
}

int64_t rowsPerBlock(int64_t cols) {
    return std::max<int64_t>(1, (int64_t{1} << 16) / std::max<int64_t>(cols, 1));
}

} // namespace kev::ops
