// SPDX-License-Identifier: MIT
// Ctrl-C while the module waits in C++ with the GIL released (a live source stalled, reconnecting
// or opening). Python's own SIGINT handler only notes the signal; the main thread raises
// KeyboardInterrupt once it runs Python code again, which a source waiting for a frame would
// delay until the next frame, its stall limit or its last reconnect. While an InterruptHook lives,
// a C handler in front of Python's also raises a stop request (SourceOptions::stop), which the
// source sees within 50 ms; Python's handler still runs, so PyErr_CheckSignals() afterwards raises
// KeyboardInterrupt as usual.
//
// The hook is put in only where Ctrl-C would raise KeyboardInterrupt anyway: on the main thread,
// with signal.default_int_handler as the Python handler of SIGINT and Python's C handler in place
// (an interpreter started without signal handlers, or a program with its own handler, is left as
// it is).
#pragma once

#include <pybind11/pybind11.h>

#include <atomic>
#include <csignal>

namespace jetpipe::python {

class InterruptHook {
 public:
  // Needs the GIL. `stop` must outlive the hook.
  explicit InterruptHook(std::atomic<int>* stop);
  ~InterruptHook();  // puts Python's handler back; needs no GIL
  InterruptHook(const InterruptHook&) = delete;
  InterruptHook& operator=(const InterruptHook&) = delete;

  bool installed() const { return installed_; }

 private:
  bool installed_ = false;
};

}  // namespace jetpipe::python
