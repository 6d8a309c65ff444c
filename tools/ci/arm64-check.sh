#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Cross-builds jetpipe's CPU part for aarch64 (cmake/toolchains/aarch64-linux-gnu.cmake), runs its
# tests under qemu-user, checks that its regression results are byte-identical to a native
# build's, and builds and checks the arm64 .deb (dpkg-deb -I / -c: architecture, Depends, contents).
#
# Tools, installed with apt-get when missing (root or sudo): g++-aarch64-linux-gnu and qemu-user
# (--no-install-recommends: no qemu-user-binfmt, so nothing is registered with the kernel and an
# arm64 binary runs only where the emulator is named). They are build tools in their own prefixes
# (/usr/aarch64-linux-gnu, /usr/bin/*-aarch64-*) that change nothing native, 68 MB and ~31 s cold;
# a compiler unpacked with dpkg -x would rely on GCC finding its parts from a moved prefix.
# Libraries: the arm64 packages the build needs (yaml-cpp, nlohmann-json, CLI11, GoogleTest's
# source, the C and C++ runtimes; ~4 MB) are downloaded with a private apt configuration for arm64
# (the system's sources, lists, caches and dpkg architectures are left alone) into .deps/arm64
# (git-ignored), unpacked with dpkg -x into .deps/arm64/sysroot (the toolchain's find root and
# qemu's -L root) and the runtime ones with dpkg-deb -R into .deps/arm64/pkgs (their DEBIAN/ gives
# dpkg-shlibdeps the package names for the .deb's Depends); reused on later runs.
#
# Usage: tools/ci/arm64-check.sh [--native DIR] [--build DIR]
#   --native DIR  a native build (CI: build; relative to the repository root) whose
#                 `jetpipe regress` results the arm64 ones must equal byte for byte; without
#                 it that comparison is skipped (and said so)
#   --build DIR   the cross build folder (default build-arm64)
# Everything ctest has runs, under qemu: the gtest binary in its shards (decision 025), regress,
# regress_detects_changes, the bring-up dry run, install_offtree (the consumer cross-built against
# the moved tree), the examples. Figures: docs/decisions/028-arm64-cross-check.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
native=""
build=build-arm64
while [ $# -gt 0 ]; do
  case "$1" in
    --native) native=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    -h|--help) sed -n '2,26p' "$0"; exit 0 ;;
    *) echo "arm64-check: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
cache=$root/.deps/arm64
start=$SECONDS
mirror=${JETPIPE_DEBIAN_MIRROR:-http://deb.debian.org/debian}
suite=bookworm  # the same release as the machine: Debian's cross compiler matches its runtimes
runtime=(libc6 libstdc++6 libgcc-s1 libyaml-cpp0.7)   # what bin/jetpipe links (the .deb's Depends)
packages=("${runtime[@]}" libyaml-cpp-dev nlohmann-json3-dev libcli11-dev googletest)
hz=$(getconf CLK_TCK)
# CPU seconds of this script and its finished children (user + system), for the figures
cpu() { awk -v hz="$hz" '{printf "%d", ($14 + $15 + $16 + $17) / hz}' "/proc/$$/stat"; }
phase() { echo "arm64-check: $1 ($((SECONDS - start)) s, $(cpu) s CPU)"; }

# ---- Tools
# (and for cpack: dpkg-shlibdeps from dpkg-dev, file; usually present already)
missing=0
for t in aarch64-linux-gnu-g++ qemu-aarch64 dpkg-shlibdeps file; do
  command -v "$t" > /dev/null || missing=1
done
if [ "$missing" = 1 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  tools=(g++-aarch64-linux-gnu qemu-user dpkg-dev file)
  phase "installing ${tools[*]}"
  export DEBIAN_FRONTEND=noninteractive
  if ! $sudo apt-get install -y -qq --no-install-recommends "${tools[@]}" > /dev/null; then
    $sudo apt-get update -qq
    $sudo apt-get install -y -qq --no-install-recommends "${tools[@]}" > /dev/null
  fi
fi
if [ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]; then
  echo "arm64-check: note: binfmt_misc runs arm64 binaries here by itself, so a test that forgets" \
       "the emulator would not fail on this machine"
fi

# ---- arm64 packages
if [ ! -f "$cache/unpacked.ok" ]; then
  phase "fetching ${packages[*]} (arm64) from $mirror $suite"
  rm -rf "$cache"
  mkdir -p "$cache/apt/lists/partial" "$cache/apt/archives/partial" "$cache/apt/cache" "$cache/debs"
  echo "deb $mirror $suite main" > "$cache/apt/sources.list"
  : > "$cache/apt/status"
  apt_opts=(-o "Dir::Etc::SourceList=$cache/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
            -o "Dir::State::Lists=$cache/apt/lists" -o "Dir::State::status=$cache/apt/status"
            -o "Dir::Cache=$cache/apt/cache" -o "Dir::Cache::Archives=$cache/apt/archives"
            -o APT::Architecture=arm64 -o APT::Architectures=arm64 -o Debug::NoLocking=1
            -o APT::Get::List-Cleanup=0 -o APT::Sandbox::User=root -qq)
  if ! apt-get "${apt_opts[@]}" --error-on=any update; then
    echo "arm64-check: FAILED: apt-get update of $mirror $suite (network?)" >&2
    exit 1
  fi
  if ! (cd "$cache/debs" && apt-get "${apt_opts[@]}" download "${packages[@]}"); then
    echo "arm64-check: FAILED: apt-get download ${packages[*]}" >&2
    exit 1
  fi
  for deb in "$cache"/debs/*.deb; do dpkg -x "$deb" "$cache/sysroot"; done
  mkdir -p "$cache/pkgs"
  for p in "${runtime[@]}"; do dpkg-deb -R "$cache"/debs/"${p}"_*.deb "$cache/pkgs/$p"; done
  touch "$cache/unpacked.ok"
else
  echo "arm64-check: reusing $cache"
fi

# ---- Cross build
phase "configuring $build"
mkdir -p "$build"
cmake -S . -B "$build" -G Ninja --toolchain "$root/cmake/toolchains/aarch64-linux-gnu.cmake" \
  -DJETPIPE_CUDA=OFF -DJETPIPE_WITH_OPENCV=OFF -DJETPIPE_WITH_GSTREAMER=OFF \
  -DJETPIPE_GTEST_SOURCE="$cache/sysroot/usr/src/googletest" > "$build/configure.log" ||
  { cat "$build/configure.log"; exit 1; }
grep -E 'jetpipe [0-9.]+:' "$build/configure.log"
phase "building"
cmake --build "$build"
file "$build/tools/jetpipe" | grep -q 'ARM aarch64' ||
  { echo "arm64-check: FAILED: $build/tools/jetpipe is not an aarch64 binary" >&2; exit 1; }

# ---- Tests under qemu (ctest puts the toolchain's emulator before each test binary)
phase "ctest under qemu-aarch64"
ctest --test-dir "$build" --output-on-failure -j "$(nproc)"

# ---- Regression results, byte for byte with a native run (regress itself allows 1e-6 relative)
if [ -n "$native" ]; then
  rm -rf "$build/regress-native"
  "$native/tools/jetpipe" regress --work-dir "$build/regress-native" > /dev/null
  n=0
  for got in "$build"/regress-out/*/results.jsonl; do
    want=$build/regress-native/$(basename "$(dirname "$got")")/results.jsonl
    cmp "$want" "$got" ||
      { echo "arm64-check: FAILED: $got differs from the native $want" >&2; exit 1; }
    n=$((n + 1))
  done
  [ "$n" -gt 0 ] ||
    { echo "arm64-check: FAILED: no regress results in $build/regress-out" >&2; exit 1; }
  phase "regress results of $n configs byte-identical to the native build's ($native)"
else
  echo "arm64-check: byte comparison with a native build skipped (no --native DIR)"
fi

# ---- The .deb
phase "cpack"
(cd "$build" && cpack -G DEB > cpack.log) || { cat "$build/cpack.log"; exit 1; }
deb=$(ls "$build"/jetpipe_*_arm64.deb)
info=$(dpkg-deb -I "$deb")
contents=$(dpkg-deb -c "$deb")
echo "$info"
fail() { echo "arm64-check: FAILED: $deb: $1" >&2; exit 1; }
[ "$(dpkg-deb -f "$deb" Architecture)" = arm64 ] || fail "Architecture is not arm64"
depends=$(dpkg-deb -f "$deb" Depends)
# Every library bin/jetpipe needs names its arm64 package in Depends, and nothing else is there.
needed=$(aarch64-linux-gnu-objdump -p "$build/tools/jetpipe" | awk '/NEEDED/ {print $2}')
want=()
for so in $needed; do
  owner=""
  for p in "${runtime[@]}"; do
    for d in lib usr/lib; do [ -e "$cache/pkgs/$p/$d/aarch64-linux-gnu/$so" ] && owner=$p; done
  done
  [ -n "$owner" ] || fail "no arm64 package here holds $so (needed by bin/jetpipe)"
  want+=("$owner")
done
mapfile -t want < <(printf '%s\n' "${want[@]}" | sort -u)
mapfile -t have < <(echo "$depends" | tr ',' '\n' | sed 's/^ *//; s/ .*//' | sort -u)
[ "${want[*]}" = "${have[*]}" ] ||
  fail "Depends '$depends' names (${have[*]}), the binary's libraries come from (${want[*]})"
for f in ./usr/bin/jetpipe ./usr/lib/libjetpipe_pipeline.a ./usr/include/jetpipe/pipeline/api.h \
         ./usr/lib/cmake/jetpipe/jetpipe-config.cmake ./usr/share/jetpipe/platforms/cpu.yaml \
         ./usr/share/jetpipe/config/default.yaml ./usr/lib/systemd/system/jetpipe@.service; do
  echo "$contents" | grep -q " $f\$" || fail "$f missing (dpkg-deb -c)"
done
echo "$info" | grep -q ' postinst' || fail "no postinst (the service's user)"
dpkg-deb -x "$deb" "$build/deb-check"
file "$build/deb-check/usr/bin/jetpipe" | grep -q 'ARM aarch64' ||
  fail "usr/bin/jetpipe is not aarch64"
"$(command -v qemu-aarch64)" -L "$cache/sysroot" "$build/deb-check/usr/bin/jetpipe" --version
rm -rf "$build/deb-check"
phase "$(basename "$deb"): arm64, Depends: $depends; $(echo "$contents" | wc -l) entries"
echo "arm64-check: passed in $((SECONDS - start)) s ($(cpu) s CPU)"
