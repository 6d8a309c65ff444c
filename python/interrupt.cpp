// SPDX-License-Identifier: MIT
#include "interrupt.h"

namespace py = pybind11;

namespace jetpipe::python {
namespace {

// The hook's target and the handler it goes in front of. Only the main thread puts a hook in, and
// it waits in C++ while one is in, so at most one is in at a time.
std::atomic<std::atomic<int>*> g_stop{nullptr};
struct sigaction g_python_handler;

extern "C" void on_sigint(int sig, siginfo_t* info, void* context) {
  if (std::atomic<int>* stop = g_stop.load()) stop->store(sig);
  const struct sigaction& p = g_python_handler;
  if ((p.sa_flags & SA_SIGINFO) != 0) {
    p.sa_sigaction(sig, info, context);
  } else if (p.sa_handler != SIG_DFL && p.sa_handler != SIG_IGN) {
    p.sa_handler(sig);
  }
}

bool wanted() {
  py::module_ threading = py::module_::import("threading");
  const py::object main = threading.attr("main_thread")();
  if (py::int_(main.attr("ident")).cast<unsigned long>() != PyThread_get_thread_ident()) {
    return false;
  }
  py::module_ signal = py::module_::import("signal");
  return signal.attr("getsignal")(signal.attr("SIGINT")).is(signal.attr("default_int_handler"));
}

}  // namespace

InterruptHook::InterruptHook(std::atomic<int>* stop) {
  if (stop == nullptr || g_stop.load() != nullptr || !wanted()) return;
  struct sigaction current {};
  if (sigaction(SIGINT, nullptr, &current) != 0) return;
  const bool is_function = (current.sa_flags & SA_SIGINFO) != 0
                               ? current.sa_sigaction != nullptr
                               : current.sa_handler != SIG_DFL && current.sa_handler != SIG_IGN;
  if (!is_function) return;  // no Python handler at the C level: Ctrl-C is not ours to take
  g_python_handler = current;
  g_stop.store(stop);
  struct sigaction ours = current;
  ours.sa_flags = (current.sa_flags | SA_SIGINFO) & ~SA_RESETHAND;
  ours.sa_sigaction = on_sigint;
  if (sigaction(SIGINT, &ours, nullptr) != 0) {
    g_stop.store(nullptr);
    return;
  }
  installed_ = true;
}

InterruptHook::~InterruptHook() {
  if (!installed_) return;
  sigaction(SIGINT, &g_python_handler, nullptr);
  g_stop.store(nullptr);
}

}  // namespace jetpipe::python
