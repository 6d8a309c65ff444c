// SPDX-License-Identifier: MIT
// A stream telling a kernel already running on another stream that its work has landed, faster
// than an event: one stream writes a value into device memory after its prior work (a stream
// memory operation, cuStreamWriteValue32), and a one-thread kernel queued on the other stream
// polls for it, then exits, and the kernel after it on that stream starts: on an H100 a running
// poller saw a strip copy's value 2.75 µs after the copy, where an event took 5.9-6.9 µs
// (docs/decisions/007-strip-copies-outside-graph.md). The poller triggers no dependents early: those
// blocks held the SMs from the frame's other strips (docs/decisions/001-pdl-early-trigger.md).
//
// The values are sequence numbers: the waiting kernel compares the flag with an expected value
// that its own stream wrote before it, so a flag left by an abandoned frame never matches a later
// one.
#pragma once

#include <cstdint>

#include <driver_types.h>  // cudaStream_t, cudaError_t only: no device headers

namespace jetpipe {

// Whether this process can write values from a stream (the driver's entry point resolved).
bool stream_values_supported();

// Writes value into *word (device memory) once the stream's prior work has completed and its
// writes are visible. cudaErrorNotSupported where !stream_values_supported(). Never synchronizes.
cudaError_t write_stream_value(std::uint32_t* word, std::uint32_t value, cudaStream_t stream);

// A one-thread kernel that returns once *flag equals *expected (both device memory; *expected is
// read once at its start). A wait longer than 10 s traps (a lost flag would otherwise hang the
// stream; the trap is a CUDA error the caller reports). Never synchronizes.
cudaError_t launch_wait_value(const std::uint32_t* flag, const std::uint32_t* expected,
                              cudaStream_t stream);

}  // namespace jetpipe
