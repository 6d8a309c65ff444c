// SPDX-License-Identifier: MIT
#include "kernels/launch_scope.h"

namespace jetpipe {

namespace {
thread_local int g_early = -1;
}  // namespace

EarlyTriggerScope::EarlyTriggerScope(bool on) : prev_(g_early) { g_early = on ? 1 : 0; }
EarlyTriggerScope::~EarlyTriggerScope() { g_early = prev_; }

int early_trigger_here() { return g_early; }

}  // namespace jetpipe
