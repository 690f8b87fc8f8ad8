// GpuLock: one measurement per GPU across harness processes; the kernel frees a dead holder's.
#include "gpu_lock.h"
#include "temp_dir.h"

#include <gtest/gtest.h>

#include <csignal>
#include <cstdio>
#include <sys/wait.h>
#include <unistd.h>

TEST(GpuLock, SecondHolderWaitsAndLearnsWhoHoldsIt) {
    kev::test::TempDir dir("gpu_lock");
    kev::GpuLock first, second;
    int holder = -1;
    std::string error;
    ASSERT_TRUE(first.tryAcquire(dir.path().string(), "GPU-5e1c-0001", &holder, &error)) << error;
    EXPECT_FALSE(second.tryAcquire(dir.path().string(), "GPU-5e1c-0001", &holder, &error));
    EXPECT_EQ(error, "");
    EXPECT_EQ(holder, ::getpid());
    // Another GPU is free.
    kev::GpuLock other;
    EXPECT_TRUE(other.tryAcquire(dir.path().string(), "GPU-5e1c-0002", &holder, &error)) << error;
    first.release();
    EXPECT_TRUE(second.tryAcquire(dir.path().string(), "GPU-5e1c-0001", &holder, &error)) << error;
}

TEST(GpuLock, ADeadHoldersLockIsFree) {
    kev::test::TempDir dir("gpu_lock");
    int ready[2];
    ASSERT_EQ(::pipe(ready), 0);
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        kev::GpuLock lock;
        int holder = 0;
        std::string error;
        const char ok =
            lock.tryAcquire(dir.path().string(), "00000000:19:00.0", &holder, &error) ? 1 : 0;
        [[maybe_unused]] const ssize_t n = ::write(ready[1], &ok, 1);
        ::pause();
        ::_exit(0);
    }
    char ok = 0;
    ASSERT_EQ(::read(ready[0], &ok, 1), 1);
    ASSERT_EQ(ok, 1);
    kev::GpuLock lock;
    int holder = 0;
    std::string error;
    EXPECT_FALSE(lock.tryAcquire(dir.path().string(), "00000000:19:00.0", &holder, &error));
    EXPECT_EQ(holder, child);
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    EXPECT_TRUE(lock.tryAcquire(dir.path().string(), "00000000:19:00.0", &holder, &error)) << error;
    ::close(ready[0]);
    ::close(ready[1]);
}

TEST(GpuLock, AFolderOfSomeoneElseOrAFileIsRefused) {
    kev::test::TempDir dir("gpu_lock");
    const std::string file = (dir / "not-a-folder").string();
    FILE* f = std::fopen(file.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fclose(f);
    kev::GpuLock lock;
    int holder = 0;
    std::string error;
    EXPECT_FALSE(lock.tryAcquire(file, "GPU-1", &holder, &error));
    EXPECT_NE(error.find("not a folder"), std::string::npos) << error;
}
