#!/usr/bin/env bash
# Compile check of the Jetson NVMM code without a board or a GPU: pipeline/io/nvmm_egl.cpp (the
# NvBufSurface → EGLImage → CUDA mapper), nvmm.cpp and the GStreamer glue built as JETPIPE_NVMM=ON
# builds them, against the Jetson Multimedia API's nvbufsurface.h and the CUDA runtime's EGL
# interop header, for this machine's architecture (the code has nothing architecture-specific).
# It compiles, it does not link (libnvbufsurface is JetPack's, arm64 only) and it runs nothing.
#
#   tools/ci/nvmm-check.sh [MMAPI_INCLUDE_DIR]      # default: .deps/jetson-mmapi/include
#
# nvbufsurface.h is NVIDIA's and never committed here: copy a board's
# /usr/src/jetson_multimedia_api/include/nvbufsurface.h (JetPack's
# nvidia-l4t-jetson-multimedia-api package) into .deps/jetson-mmapi/include (git-ignored). Without
# it the check says so and exits 2. CUDA headers: $CUDA_HOME, /usr/local/cuda, or the CUDA 12.4
# toolkit that tools/ci/cuda12-check.sh unpacks into .deps/cuda12. Any warning fails it (exit 1).
# Not run by CI (.ci/run): CI has no copy of the header. About 10 s on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/../.."
mmapi=$(realpath -m "${1:-.deps/jetson-mmapi/include}")
if [ ! -f "$mmapi/nvbufsurface.h" ]; then
  echo "nvmm-check: no $mmapi/nvbufsurface.h (copy it from a Jetson's" \
       "/usr/src/jetson_multimedia_api/include)" >&2
  exit 2
fi
cuda=""
for d in "${CUDA_HOME:-}" /usr/local/cuda .deps/cuda12/root/usr; do
  if [ -n "$d" ] && [ -f "$d/include/cuda_egl_interop.h" ]; then cuda=$(realpath "$d"); break; fi
done
if [ -z "$cuda" ]; then
  echo "nvmm-check: no CUDA headers with cuda_egl_interop.h (set CUDA_HOME)" >&2
  exit 2
fi
start=$SECONDS
flags=(-std=c++17 -Wall -Wextra -fsyntax-only -DJETPIPE_HAVE_CUDA=1 -DJETPIPE_HAVE_GSTREAMER=1
       -DJETPIPE_HAVE_NVMM=1 -DJETPIPE_HAVE_OPENCV=0 -I. -isystem "$mmapi" -isystem "$cuda/include")
read -r -a gst <<< "$(pkg-config --cflags gstreamer-app-1.0 gstreamer-video-1.0)"
failed=0
for src in pipeline/io/nvmm_egl.cpp pipeline/io/nvmm.cpp pipeline/io/gst_device_memory.cpp; do
  if out=$(g++ "${flags[@]}" "${gst[@]}" "$src" 2>&1) && [ -z "$out" ]; then
    echo "ok   $src"
  else
    echo "FAIL $src"; echo "$out"; failed=1
  fi
done
echo "nvmm-check: $(grep -m1 -o 'Copyright (c) [0-9-]*' "$mmapi/nvbufsurface.h" || echo 'nvbufsurface.h'), CUDA headers $cuda, $((SECONDS - start)) s"
[ $failed -eq 0 ] || { echo "nvmm-check: FAILED" >&2; exit 1; }
