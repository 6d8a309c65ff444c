// SPDX-License-Identifier: MIT
// What a caller says about a group of launches beyond their arguments. Launchers of the chain's
// programmatic kernels take it right before the stream. Host-only header: no CUDA includes.
#pragma once

namespace jetpipe {

struct LaunchContext {
  // Whether the chain's programmatic launches let their dependents launch at their start
  // (kernels/block/pdl.cuh, pdl_trigger); the executor turns it off for frames of several strips
  // (docs/decisions/001-pdl-early-trigger.md).
  bool early_trigger = true;
};

}  // namespace jetpipe
