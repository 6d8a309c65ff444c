#!/usr/bin/env bash
# Copies the header-only dependencies and GoogleTest's source from this (Debian) machine into .deps/
# (ignored by git), for building on a CUDA machine that lacks those packages: pass
# -DJETPIPE_DEPS_DIR=.deps -DJETPIPE_GTEST_SOURCE=.deps/googletest to CMake there. GStreamer:
# tools/gpu/gst-bundle.sh (.deps/gst, left alone here).
set -euo pipefail
cd "$(dirname "$0")/../.."
rm -rf .deps/include .deps/googletest && mkdir -p .deps/include
cp -r /usr/include/nlohmann /usr/include/CLI /usr/include/dlpack .deps/include/
cp -r /usr/src/googletest .deps/googletest
du -sh .deps
