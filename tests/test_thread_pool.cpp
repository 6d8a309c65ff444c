// SPDX-License-Identifier: MIT
// The host executor's thread pool (pipeline/thread_pool.h): every index once, tasks really
// concurrent, the lowest failing index's exception rethrown as it is, no deadlock on misuse,
// clean shutdown.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <new>
#include <thread>
#include <vector>

#include "core/error.h"
#include "pipeline/thread_pool.h"
#include "test_util.h"

namespace jetpipe {
namespace {

using test::error_of;
using test::has;

TEST(ThreadPool, RunsEveryIndexOnce) {
  for (int threads : {1, 2, 3, 7}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.threads(), threads);
    for (int n : {0, 1, 2, 3, 5, 8, 100}) {
      std::vector<std::atomic<int>> calls(static_cast<std::size_t>(n));
      pool.run(n, [&](int i) { calls[static_cast<std::size_t>(i)]++; });
      for (int i = 0; i < n; ++i) EXPECT_EQ(calls[i].load(), 1) << threads << " threads, " << n;
    }
  }
}

TEST(ThreadPool, ManyShortRunsInARow) {
  ThreadPool pool(3);
  std::atomic<long long> sum{0};
  for (int r = 0; r < 20000; ++r) pool.run(1 + r % 4, [&](int i) { sum += i + 1; });
  long long want = 0;
  for (int r = 0; r < 20000; ++r) want += (1 + r % 4) * (2 + r % 4) / 2;
  EXPECT_EQ(sum.load(), want);
}

// Both tasks wait until both have started: they finish only if they run at the same time.
TEST(ThreadPool, TasksRunConcurrently) {
  ThreadPool pool(2);
  std::mutex m;
  std::condition_variable cv;
  int arrived = 0;
  std::atomic<int> met{0};
  pool.run(2, [&](int) {
    std::unique_lock<std::mutex> lk(m);
    ++arrived;
    cv.notify_all();
    if (cv.wait_for(lk, std::chrono::seconds(20), [&] { return arrived == 2; })) ++met;
  });
  EXPECT_EQ(met.load(), 2);
}

TEST(ThreadPool, LowestFailingIndexIsRethrownAfterEveryTaskRan) {
  for (int threads : {1, 2, 3, 7}) {
    ThreadPool pool(threads);
    std::vector<std::atomic<int>> calls(9);
    const std::string msg = error_of([&] {
      pool.run(9, [&](int i) {
        calls[static_cast<std::size_t>(i)]++;
        if (i == 7 || i == 3 || i == 5) throw Error("strip " + std::to_string(i) + " failed");
      });
    });
    EXPECT_EQ(msg, "strip 3 failed") << threads << " threads";
    for (int i = 0; i < 9; ++i) EXPECT_EQ(calls[i].load(), 1) << i;
    // The pool goes on after a failure.
    std::atomic<int> after{0};
    pool.run(4, [&](int) { ++after; });
    EXPECT_EQ(after.load(), 4);
  }
}

TEST(ThreadPool, ExceptionKeepsItsType) {
  ThreadPool pool(3);
  EXPECT_THROW(pool.run(5,
                        [](int i) {
                          if (i == 2) throw std::bad_alloc();
                        }),
               std::bad_alloc);
  try {
    pool.run(4, [](int i) {
      if (i >= 1) throw config_error("bad " + std::to_string(i));
    });
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kConfig);
    EXPECT_STREQ(e.what(), "bad 1");
  }
}

TEST(ThreadPool, RunFromATaskIsAnErrorNotADeadlock) {
  for (int threads : {1, 2}) {
    ThreadPool pool(threads);
    const std::string msg = error_of([&] { pool.run(2, [&](int) { pool.run(2, [](int) {}); }); });
    EXPECT_TRUE(has(msg, "one run at a time")) << msg;
  }
}

TEST(ThreadPool, RunFromASecondThreadWhileRunningIsAnError) {
  ThreadPool pool(2);
  std::string msg;
  pool.run(1, [&](int) {
    std::thread other([&] { msg = error_of([&] { pool.run(3, [](int) {}); }); });
    other.join();
  });
  EXPECT_TRUE(has(msg, "one run at a time")) << msg;
}

TEST(ThreadPool, ShutsDownIdleBusyAndFreshPools) {
  for (int i = 0; i < 200; ++i) {
    ThreadPool fresh(1 + i % 7);  // never ran
  }
  for (int i = 0; i < 200; ++i) {
    ThreadPool pool(1 + i % 7);
    std::atomic<int> n{0};
    pool.run(i % 9, [&](int) { ++n; });
    EXPECT_EQ(n.load(), i % 9);
  }  // destroyed right after a run: workers may still be waking
}

TEST(ThreadPool, RejectsFewerThanOneThread) {
  EXPECT_TRUE(has(error_of([] { ThreadPool pool(0); }), "at least 1"));
  EXPECT_TRUE(has(error_of([] { ThreadPool pool(-3); }), "at least 1"));
  EXPECT_GE(hardware_threads(), 1);
}

}  // namespace
}  // namespace jetpipe
