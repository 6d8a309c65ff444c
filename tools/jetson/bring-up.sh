#!/usr/bin/env bash
# First run on a Jetson board: what the board is (L4T/JetPack, CUDA, power mode, clocks,
# temperatures), then the GPU tests, `jetpipe tune` for config/default.yaml (a profile for this
# board), `jetpipe bench pipeline` at 1080p and 4K, the NVMM check (tools/jetson/nvmm-frames.sh:
# decoded frames into CUDA, headless, the copying path's results) and a run of the default job with
# the tuned profile; everything into one folder and a tarball to attach to an issue.
#
#   tools/jetson/bring-up.sh [--build DIR] [--out DIR] [--dry-run] [--quick] [--emulator CMD]
#
#   --build DIR  the build folder (default: build); configure and build first, e.g.
#                cmake -S . -B build -G Ninja && cmake --build build
#   --out DIR    where the report goes (default: bring-up-<host>-<date>)
#   --dry-run    no GPU work: print each GPU step's command instead of running it, run the rest
#                (what CI runs on a machine without a GPU or a board)
#   --quick      fewer frames and runs (a smoke test of the script on a board, minutes not tens)
#   --emulator CMD  run the build's binaries through CMD (words split on spaces): a cross build's
#                emulator, e.g. 'qemu-aarch64 -L .deps/arm64/sysroot' (ctest passes its own)
#
# Writes OUT/report.md (the summary to paste), OUT/system.txt, OUT/info.txt, OUT/gpu-tests.log,
# OUT/platform-<board>.yaml (tuned), OUT/bench.json and bench.txt, OUT/run/summary.json (with the
# board's power and thermal state over the run), and OUT.tar.gz. Exit 0 when every step it ran
# passed; 1 when one failed (the report says which; the later steps still run).
set -uo pipefail
cd "$(dirname "$0")/../.."
build=build
out=""
dry=0
quick=0
emulator=()
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --dry-run) dry=1; shift ;;
    --quick) quick=1; shift ;;
    --emulator) read -r -a emulator <<< "$2"; shift 2 ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "bring-up: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
if [ ! -x "$build/tools/jetpipe" ]; then
  echo "bring-up: $build/tools/jetpipe not found: build first (cmake -S . -B $build -G Ninja && cmake --build $build)" >&2
  exit 2
fi
jetpipe=("${emulator[@]}" "$build/tools/jetpipe")
[ -n "$out" ] || out="bring-up-$(hostname)-$(date +%Y%m%d-%H%M)"
mkdir -p "$out"
report="$out/report.md"
failed=()

# Reads a file's first line, or "n/a".
first_line() { [ -r "$1" ] && head -n1 "$1" | tr -d '\0' || echo "n/a"; }

# One step: its title, then the command; in a dry run a GPU step is only listed.
step() {  # step gpu|host TITLE LOG COMMAND...
  local kind=$1 title=$2 log=$3; shift 3
  echo "== $title"
  if [ "$dry" = 1 ] && [ "$kind" = gpu ]; then
    echo "   (dry run) $*" | tee "$out/$log"
    echo "- $title: not run (dry run): \`$*\`" >> "$report"
    return 0
  fi
  local t0=$SECONDS
  if "$@" > "$out/$log" 2>&1; then
    echo "- $title: passed in $((SECONDS - t0)) s (\`$log\`)" >> "$report"
  else
    echo "   FAILED (rc $?): see $out/$log" >&2
    echo "- $title: **FAILED** after $((SECONDS - t0)) s (\`$log\`)" >> "$report"
    failed+=("$title")
  fi
  tail -n 3 "$out/$log" | sed 's/^/   /'
}

# ---- The board, as it is now
{
  echo "date: $(date -Iseconds)"
  echo "host: $(hostname), $(uname -srm)"
  echo "l4t: $(first_line /etc/nv_tegra_release)"
  echo "jetpack: $(dpkg-query -W -f='${Version}' nvidia-jetpack 2>/dev/null || echo n/a)"
  echo "model: $(first_line /proc/device-tree/model)"
  echo "nvcc: $( (command -v nvcc >/dev/null && nvcc --version | tail -n1) || echo n/a)"
  echo "nvpmodel: $( (command -v nvpmodel >/dev/null && nvpmodel -q 2>/dev/null | tr '\n' ' ') ||
                     first_line /var/lib/nvpmodel/status)"
  for d in /sys/class/devfreq/*; do
    [ -r "$d/device/of_node/name" ] || continue
    echo "devfreq $(basename "$d") ($(tr -d '\0' < "$d/device/of_node/name")):" \
      "cur $(first_line "$d/cur_freq") Hz, range $(first_line "$d/min_freq")-$(first_line "$d/max_freq")"
  done
  echo "emc: $(first_line /sys/kernel/debug/bpmp/debug/clk/emc/rate) Hz (debugfs; n/a without root)"
  for z in /sys/class/thermal/thermal_zone*; do
    [ -r "$z/temp" ] && echo "thermal $(first_line "$z/type"): $(first_line "$z/temp") m°C"
  done
} > "$out/system.txt" 2>&1
board=$(first_line /proc/device-tree/model)
[ "$board" = n/a ] && board=$(hostname)
board=$(echo "$board" | tr -cs 'A-Za-z0-9' '-' | tr 'A-Z' 'a-z' | sed 's/^-*//; s/-*$//')
{
  echo "# jetpipe bring-up: $board"
  echo
  echo '```'
  cat "$out/system.txt"
  echo '```'
  echo
  echo "$("${jetpipe[@]}" --version 2>/dev/null), commit $(git rev-parse --short HEAD 2>/dev/null || echo n/a)$([ "$dry" = 1 ] && echo ', dry run')"
  echo
  echo "## Steps"
} > "$report"
cat "$out/system.txt"

frames=300; repeat=3
[ "$quick" = 1 ] && frames=60 && repeat=1
profile="$out/platform-$board.yaml"
step host "jetpipe info (device, the profile auto picks and why)" info.txt "${jetpipe[@]}" info
step gpu "GPU tests" gpu-tests.log "${emulator[@]}" "$build/tests/jetpipe_tests" --gtest_filter='*Gpu*' --gtest_brief=1
step gpu "jetpipe tune (config/default.yaml)" tune.txt \
  "${jetpipe[@]}" tune --config config/default.yaml --output "$profile" --frames "$frames" --repeat "$repeat"
step gpu "jetpipe bench pipeline (1080p, 4K)" bench.txt \
  "${jetpipe[@]}" bench pipeline --config config/default.yaml --sizes 1920x1080,3840x2160 \
  --frames "$frames" --repeat "$repeat" --json "$out/bench.json"
step gpu "NVMM frames: decoder into CUDA, headless, results as with ?nvmm=0" nvmm-frames.txt \
  tools/jetson/nvmm-frames.sh --build "$build" --out "$out/nvmm-frames"
run_platform=auto
[ -f "$profile" ] && run_platform=$profile
[ "$dry" = 1 ] && run_platform=cpu
step host "the default job (platform $run_platform; summary.json has the board's state)" run.txt \
  "${jetpipe[@]}" run --config config/default.yaml --platform "$run_platform" --output-dir "$out/run"

{
  echo
  if [ ${#failed[@]} -eq 0 ]; then
    echo "Every step that ran passed."
  else
    echo "Failed: ${failed[*]}."
  fi
  [ -f "$out/run/summary.json" ] && echo && echo "summary.json of the default job: \`run/summary.json\`."
} >> "$report"
tar -czf "$out.tar.gz" -C "$(dirname "$out")" "$(basename "$out")" && echo "report: $report; attach $out.tar.gz to an issue"
[ ${#failed[@]} -eq 0 ]
