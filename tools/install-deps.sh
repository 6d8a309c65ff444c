#!/usr/bin/env bash
# Installs the Debian packages jetpipe builds and tests with, if any is missing. Idempotent and
# non-interactive; needs root (or sudo). The CUDA toolkit is not a Debian package here: nvcc is used
# when found (on the PATH or in /usr/local/cuda), else the CPU backend builds alone.
set -euo pipefail
packages=(
  cmake ninja-build g++ pkg-config             # build
  libyaml-cpp-dev nlohmann-json3-dev libcli11-dev  # required
  libopencv-dev                                # optional: PNG/JPEG/TIFF frames, video files, parity tests
  libgtest-dev                                 # tests
  python3-dev pybind11-dev libdlpack-dev       # optional: the Python module (python/), DLPack
  python3-numpy python3-pytest                 # its tests
  clang libclang-rt-14-dev llvm                # sanitizer suite and fuzzers (tools/ci/sanitize.sh,
                                               # fuzz-smoke.sh): clang, its ASan/UBSan/libFuzzer
                                               # runtimes, llvm-symbolizer for readable reports
  # optional: GStreamer sources (cameras, video files, RTSP/RTP, videotestsrc) and video outputs
  libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev   # core, app, video (build)
  gstreamer1.0-plugins-base gstreamer1.0-plugins-good    # decodebin, videoconvert, v4l2src, rtsp/rtp, mp4mux, matroskamux
  gstreamer1.0-plugins-bad                     # h264parse
  gstreamer1.0-plugins-ugly                    # x264enc (H.264 video outputs)
  gstreamer1.0-libav                           # avdec_* software decoders
  libgstrtspserver-1.0-dev                     # rtsp:// video output
  libgstreamer-plugins-bad1.0-dev              # GStreamer's CUDA library (CUDA-memory frames)
  opencv-doc                                   # sample video and photos used by configs and tests
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
