#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Compiles the CUDA backend with Debian trixie's CUDA 12.4 toolkit (JetPack 6 generation) for sm_87:
# every kernels/*.cu and kernels/*/*.cu with nvcc, and the CUDA-using pipeline/*.cpp with g++ and the
# 12.4 headers first on the include path. The toolkit is downloaded with a private apt configuration
# (the system's sources, lists and caches are left alone) into .deps/cuda12 (git-ignored), unpacked
# with dpkg -x and reused on later runs; the .debs (1 GB) and the static libraries (2.3 GB of the
# 2.7 GB unpacked, unused: the check compiles, never links) are deleted after unpacking, so the
# cache holds 280 MB. Fails on any download or compile error.
# Usage: tools/ci/cuda12-check.sh [cache dir, default .deps/cuda12]
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
cache=$(realpath -m "${1:-.deps/cuda12}")
start=$SECONDS
# Same host as the machine's own sources (/etc/apt/sources.list.d/debian.sources).
mirror=${JETPIPE_DEBIAN_MIRROR:-http://deb.debian.org/debian}
packages=(nvidia-cuda-toolkit nvidia-cuda-dev libcudart12 libnvvm4 libcub-dev libcu++-dev libthrust-dev)
tk=$cache/root
nvcc=$tk/usr/lib/nvidia-cuda-toolkit/bin/nvcc

if [ ! -f "$cache/unpacked.ok" ]; then
  mkdir -p "$cache/apt/lists/partial" "$cache/apt/archives/partial" "$cache/apt/cache"
  echo "deb $mirror trixie main non-free" > "$cache/apt/sources.list"
  apt_opts=(-o "Dir::Etc::SourceList=$cache/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
            -o "Dir::State::Lists=$cache/apt/lists" -o "Dir::Cache=$cache/apt/cache"
            -o "Dir::Cache::Archives=$cache/apt/archives" -o Debug::NoLocking=1
            -o APT::Get::List-Cleanup=0 -o APT::Sandbox::User=root -qq)
  echo "cuda12-check: fetching ${packages[*]} from $mirror trixie"
  if ! apt-get "${apt_opts[@]}" --error-on=any update; then
    echo "cuda12-check: FAILED: apt-get update of $mirror trixie (network?)" >&2
    exit 1
  fi
  mkdir -p "$cache/debs"
  if ! (cd "$cache/debs" && apt-get "${apt_opts[@]}" download "${packages[@]}"); then
    echo "cuda12-check: FAILED: apt-get download ${packages[*]}" >&2
    exit 1
  fi
  rm -rf "$tk"
  for deb in "$cache"/debs/*.deb; do dpkg -x "$deb" "$tk"; done
  rm -rf "$cache/debs" "$cache/apt"
  find "$tk/usr/lib" -name '*_static*.a' -delete
  # The shipped nvcc.profile points at /etc and /usr; make it relative to the unpacked tree.
  cat > "$tk/usr/lib/nvidia-cuda-toolkit/bin/nvcc.profile" <<'PROFILE'
TOP              = $(_HERE_)/../../../..
NVVMIR_LIBRARY_DIR = $(TOP)/usr/lib/nvidia-cuda-toolkit/libdevice
LD_LIBRARY_PATH += $(TOP)/usr/lib/x86_64-linux-gnu:
PATH            += $(TOP)/usr/lib/nvidia-cuda-toolkit/bin:$(TOP)/usr/bin:
INCLUDES        += "-I$(TOP)/usr/include" $(_SPACE_)
LIBRARIES        =+ $(_SPACE_) "-L$(TOP)/usr/lib/x86_64-linux-gnu/stubs" "-L$(TOP)/usr/lib/x86_64-linux-gnu"
CUDAFE_FLAGS    +=
PTXAS_FLAGS     +=
PROFILE
  touch "$cache/unpacked.ok"
  echo "cuda12-check: toolkit unpacked in $((SECONDS - start)) s"
else
  echo "cuda12-check: reusing $tk"
fi
"$nvcc" --version | tail -n 2

defs=(-DJETPIPE_HAVE_CUDA=1 -DJETPIPE_HAVE_OPENCV=0 -DJETPIPE_HAVE_GSTREAMER=0
      -DJETPIPE_VERSION=\"cuda12-check\" -DJETPIPE_SOURCE_DIR=\"$root\")
inc=(-I"$tk/usr/include" -I"$root")
[ -f .deps/include/nlohmann/json.hpp ] && inc+=(-I"$root/.deps/include")  # prepare-deps.sh's
out=$cache/obj
rm -rf "$out"
mkdir -p "$out"
compile() {  # one source; the log is printed when it fails
  local src=$1 o="$out/$(echo "$1" | tr / _).o"
  case "$src" in
    *.cu) "$nvcc" -std=c++17 -O3 -arch=sm_87 --expt-relaxed-constexpr -Xptxas=-warn-spills \
            -Werror=all-warnings "${defs[@]}" "${inc[@]}" -c "$src" -o "$o" ;;
    *) g++ -std=c++17 -O2 -Wall -Wextra "${defs[@]}" "${inc[@]}" -c "$src" -o "$o" ;;
  esac > "$o.log" 2>&1 || { echo "FAIL $src"; cat "$o.log"; return 1; }
  if grep -q . "$o.log"; then echo "WARN $src"; cat "$o.log"; return 1; fi
  echo "ok   $src"
}
export -f compile
export nvcc out
export defs_s="${defs[*]}" inc_s="${inc[*]}"
# Every kernel, and every library .cpp that calls CUDA (the executor, slots, scheduler, timing,
# frame pool, platform, the stages' GPU glue, the device-info cache).
mapfile -t host < <(grep -lE 'cuda_runtime|JETPIPE_HAVE_CUDA' core/*.cpp kernels/*.cpp \
                      kernels/*/*.cpp stages/*.cpp pipeline/*.cpp pipeline/io/*.cpp 2>/dev/null)
sources=(kernels/*.cu kernels/*/*.cu "${host[@]}")
failed=0
printf '%s\n' "${sources[@]}" |
  xargs -P 2 -I{} bash -c 'defs=($defs_s); inc=($inc_s); compile {}' || failed=1
echo "cuda12-check: ${#sources[@]} sources for sm_87 with CUDA 12.4, $((SECONDS - start)) s in all"
if [ $failed -ne 0 ]; then
  echo "cuda12-check: FAILED (see above)" >&2
  exit 1
fi
