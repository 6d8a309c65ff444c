// SPDX-License-Identifier: MIT
#include "pipeline/thread_pool.h"

#include <sched.h>

#include <system_error>

#include "core/error.h"

namespace jetpipe {

ThreadPool::ThreadPool(int threads) {
  if (threads < 1) {
    throw Error("thread pool: " + std::to_string(threads) + " threads (at least 1)");
  }
  workers_.reserve(static_cast<std::size_t>(threads - 1));
  try {
    for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { work(); });
  } catch (const std::system_error& e) {
    const std::size_t started = workers_.size();
    {
      std::lock_guard<std::mutex> lk(m_);
      stop_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : workers_) t.join();
    throw Error("thread pool: could not start thread " + std::to_string(started + 2) + " of " +
                std::to_string(threads) + ": " + e.what());
  }
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lk(m_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::drain(std::unique_lock<std::mutex>& lk) {
  while (next_ < n_) {
    const int i = next_++;
    const std::function<void(int)>& task = *task_;
    lk.unlock();
    std::exception_ptr failed;
    try {
      task(i);
    } catch (...) {
      failed = std::current_exception();
    }
    lk.lock();
    if (failed && (!error_ || i < error_index_)) {
      error_ = failed;
      error_index_ = i;
    }
  }
}

void ThreadPool::work() {
  std::unique_lock<std::mutex> lk(m_);
  std::uint64_t seen = 0;  // not job_: a worker that starts late still joins the first job
  for (;;) {
    wake_.wait(lk, [&] { return stop_ || job_ != seen; });
    if (stop_) return;
    seen = job_;
    ++busy_;
    drain(lk);
    if (--busy_ == 0) done_.notify_all();
  }
}

void ThreadPool::run(int n, const std::function<void(int)>& task) {
  if (n <= 0) return;
  std::unique_lock<std::mutex> lk(m_);
  if (running_) {
    throw Error(
        "thread pool: run() called while a run is in progress (from a task, or from a "
        "second thread): one run at a time");
  }
  running_ = true;
  task_ = &task;
  n_ = n;
  next_ = 0;
  error_ = nullptr;
  ++job_;
  if (!workers_.empty() && n > 1) wake_.notify_all();
  drain(lk);
  // Every index is taken; wait for the workers still running theirs.
  done_.wait(lk, [&] { return busy_ == 0; });
  task_ = nullptr;
  n_ = next_ = 0;
  running_ = false;
  std::exception_ptr error = std::move(error_);
  error_ = nullptr;
  lk.unlock();
  if (error) std::rethrow_exception(error);
}

int hardware_threads() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

}  // namespace jetpipe
