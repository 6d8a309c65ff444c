// SPDX-License-Identifier: MIT
// A small fork-join pool for the host executor: run(n, task) calls task(0) … task(n − 1), spread
// over the pool's threads (the calling thread is one of them), and returns when all have finished.
//   ThreadPool pool(4);                       // 3 workers + the caller
//   pool.run(strips, [&](int k) { stage->run_cpu(pass, in, out, k, b[k], b[k + 1]); });
// Every task runs, even after one throws; run() then rethrows the exception of the lowest index
// that threw (its own type and message), so the error a caller sees does not depend on the thread
// count or on timing. One run() at a time: a second caller, or a task calling run() on its own
// pool, gets a jetpipe::Error instead of a deadlock. The destructor joins the workers.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace jetpipe {

class ThreadPool {
 public:
  // threads ≥ 1 (1: every task on the calling thread, no worker started). Throws jetpipe::Error
  // if a worker cannot be started (those already started are joined first).
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int threads() const { return static_cast<int>(workers_.size()) + 1; }

  void run(int n, const std::function<void(int)>& task);

 private:
  void work();
  // Takes and runs indices of the current job until none is left; called with lk held, returns
  // with it held.
  void drain(std::unique_lock<std::mutex>& lk);

  std::mutex m_;
  std::condition_variable wake_, done_;
  std::vector<std::thread> workers_;
  const std::function<void(int)>* task_ = nullptr;
  int n_ = 0, next_ = 0;
  int busy_ = 0;           // workers inside the current job
  std::uint64_t job_ = 0;  // counts run() calls: a worker joins each job once
  bool running_ = false, stop_ = false;
  std::exception_ptr error_;  // the lowest-index failure of the current job
  int error_index_ = 0;
};

// The CPUs this process may run on (its affinity mask: taskset, a container's cpuset), else
// std::thread::hardware_concurrency(); at least 1.
int hardware_threads();

}  // namespace jetpipe
