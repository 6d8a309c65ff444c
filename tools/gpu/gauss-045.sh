#!/usr/bin/env bash
# Decision 045's device run (experiment, to be removed with its knobs once measured): builds main
# (.) and this tree (.gauss, carried) side by side, then benches (alternating), the GPU filter
# tests, ncu, pdl-order and memcheck, each step skipped once BUDGET seconds are near. MODE=mini
# builds tools/gpu/gauss_mini.cu against each tree with nvcc alone (no CMake build): the bit-exact
# check, the timings and ncu in ~90 s. Logs in $OUT/logs.tgz, summary in $OUT/summary.txt.
set -uo pipefail
L=/tmp/l; mkdir -p $L; OUT=${OUT:-/tmp/out}; S=$OUT/summary.txt
BUDGET=${BUDGET:-225}
say() { echo "[$SECONDS s] $*" | tee -a $S; }
pack() { tar -czf $OUT/logs.tgz -C $L . 2>/dev/null; }
left() { [ $((BUDGET - SECONDS)) -gt "$1" ]; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader | tee -a $S
date -u | tee -a $S
if [ "${MODE:-full}" = mini ]; then  # no CMake build: gauss_mini.cu against each tree (~90 s)
  mini() {  # tree, binary
    nvcc -O3 -std=c++17 -arch=sm_90 -DJETPIPE_HAVE_CUDA=1 -I$1 -I.deps/include -o $2 \
      .gauss/tools/gpu/gauss_mini.cu $1/kernels/gaussian.cu $1/kernels/gaussian_ref.cpp \
      $1/kernels/to_gray.cu $1/kernels/texture.cu $1/kernels/launch/device_info.cpp \
      $1/core/border.cpp $1/core/environment.cpp $1/core/image.cpp
  }
  mini . /tmp/mini-main > $L/mini-main-build.log 2>&1 & p1=$!
  mini .gauss /tmp/mini-new > $L/mini-new-build.log 2>&1 & p2=$!
  wait $p1; r1=$?; wait $p2; r2=$?
  say "mini builds main rc=$r1 new rc=$r2"
  timeout 60 /tmp/mini-new new check > $L/mini-check.txt 2>&1
  say "check rc=$? $(tail -1 $L/mini-check.txt)"
  for i in 1 2; do
    for t in main new; do timeout 30 /tmp/mini-$t $t >> $L/mini-bench.txt 2>&1; done
  done
  cat $L/mini-bench.txt >> $S
  for t in new main; do
    timeout 30 ncu --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis \
      --section WarpStateStats --section Occupancy --section SchedulerStats \
      -k regex:fast_separable_kernel --launch-skip 3 --launch-count 1 /tmp/mini-$t $t \
      > $L/ncu-$t.txt 2>&1
    echo "== ncu $t" >> $S
    grep -E "Duration|DRAM Throughput|Issue Slots Busy|Achieved Occupancy|Warp Cycles Per Issued" \
      $L/ncu-$t.txt | head -8 >> $S
  done
  pack; cat $S; exit 0
fi
deps=(-DJETPIPE_DEPS_DIR=$PWD/.deps -DJETPIPE_GTEST_SOURCE=$PWD/.deps/googletest)
build() {  # src, name, jobs, targets...
  local src=$1 name=$2 j=$3; shift 3
  cmake -S $src -B $src/build-dev -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    "${deps[@]}" > $L/$name-configure.log 2>&1 &&
    cmake --build $src/build-dev -j $j --target "$@" > $L/$name-build.log 2>&1
}
build . main 8 jetpipe-bench & pm=$!
build .gauss new 8 jetpipe-bench & pn=$!
wait $pm; rm_=$?; wait $pn; rn=$?
say "build main rc=$rm_ new rc=$rn"
[ $rn = 0 ] || { grep -m8 -B2 -A8 -E "error|warning" $L/new-build.log | tee -a $S; pack; exit 1; }
pack
# The tests build (niced) while the benches run.
nice -n 19 cmake --build .gauss/build-dev -j 14 --target jetpipe_tests > $L/new-tests-build.log 2>&1 &
pt=$!
B=build-dev/tools/jetpipe-bench
for i in 1 2; do
  for t in main new; do
    d=.; [ $t = new ] && d=.gauss
    left 100 || break
    [ $t = main ] && [ $rm_ != 0 ] && continue
    timeout 40 $d/$B --area filters --filter gaussian --sizes 16384x16384,1920x1080 --reps 25 \
      > $L/gauss-$t-$i.txt 2>&1
    timeout 25 $d/$B --area pipeline --sizes 1920x1080 --reps 50 > $L/chain-$t-$i.txt 2>&1
  done
done
say "benches done"; pack
wait $pt; say "tests build rc=$?"
if left 60; then
  timeout 45 .gauss/build-dev/tests/jetpipe_tests \
    --gtest_filter='GpuGaussian*:GpuFastRing*:GpuFastRows*:GpuBox.*:GpuBoxKsize*:GpuSobel*:GpuFilterPhoto*:GpuFilterArgs*:GpuTexture*' \
    > $L/tests.txt 2>&1
  say "tests rc=$? $(grep -E '^\[  (PASSED|FAILED)|tests? ran' $L/tests.txt | tr '\n' ' ')"
  grep -E '^\[  FAILED' $L/tests.txt | head -10 | tee -a $S
fi
pack
if left 40; then
  for t in new main; do
    d=.; [ $t = new ] && d=.gauss
    left 30 || break
    timeout 25 ncu --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis \
      --section WarpStateStats --section Occupancy --section LaunchStats --section InstructionStats \
      --section SchedulerStats -k regex:fast_separable_kernel --launch-skip 2 --launch-count 1 \
      $d/$B --area filters --filter gaussian --sizes 16384x16384 --reps 3 > $L/ncu-$t.txt 2>&1
  done
  say "ncu done"
fi
pack
if left 15; then
  (cd .gauss && timeout 12 tools/gpu/pdl-order.sh build-dev) > $L/pdl-order.txt 2>&1
  say "pdl-order: $(tail -1 $L/pdl-order.txt)"
fi
if left 12; then
  timeout $((BUDGET - SECONDS - 5)) compute-sanitizer --tool memcheck --error-exitcode 9 \
    .gauss/build-dev/tests/jetpipe_tests --gtest_filter='GpuFastRing*:GpuGaussianWide*:GpuFastRows*' \
    > $L/memcheck.txt 2>&1
  say "memcheck rc=$? $(grep -E 'ERROR SUMMARY|^\[  (PASSED|FAILED)' $L/memcheck.txt | tr '\n' ' ')"
fi
pack
for f in $L/gauss-*.txt; do
  echo "== ${f##*/}"; awk '/^kernel +impl/{exit} 1' $f | grep -E "gaussian|copy bandwidth" | grep -v opencv
done >> $S
for f in $L/chain-*.txt; do echo "== ${f##*/}"; grep -E "pipeline +jetpipe-graph-gpu" $f | head -2; done >> $S
for t in new main; do
  echo "== ncu $t"
  grep -E "Duration|DRAM Throughput|Memory Throughput|Issue Slots Busy|Achieved Occupancy|Registers Per|Executed Ipc A|Warp Cycles Per Issued|Theoretical Occupancy|L2 Hit|Block Limit Shared|Dynamic Shared" $L/ncu-$t.txt | head -16
done >> $S
pack
cat $S
