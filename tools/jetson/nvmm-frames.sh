#!/usr/bin/env bash
# On a Jetson: checks that decoded (and, with --csi, camera) frames reach the GPU as NVMM surfaces
# mapped into CUDA, headless, with the results of the copying path (?nvmm=0). What was verified
# without a board and what this checks: README, "Frames that never touch the CPU".
#
#   tools/jetson/nvmm-frames.sh [--build DIR] [--out DIR] [--csi]
#
# Steps (each prints ok / FAILED; exit 1 when one failed):
#  1. `jetpipe info` says NVMM frames are built in and map here (the mapper's probe: a 64x64 RGBA
#     surface through NvBufSurfaceMapEglImage → cudaGraphicsEGLRegisterImage → a pitch frame).
#  2. A 1280x720 H.264 clip is encoded (nvv4l2h264enc) from a test pattern.
#  3. For a gray config (NV12 surfaces, luma read in place) and config/default.yaml (RGBA surfaces),
#     with DISPLAY unset (headless): file://clip.mp4 runs with summary.json's source saying
#     "NVMM surfaces mapped into CUDA", no frame error, and the same results, frame for frame, as
#     file://clip.mp4?nvmm=0 (nvvidconv into system memory, copied).
#  4. With --csi: csi://0 for 150 frames with and without nvmm=0: no frame error, NVMM in the
#     first; frames per second of both printed (live: results differ, not compared).
set -uo pipefail
cd "$(dirname "$0")/../.."
build=build
out=nvmm-frames-$(date +%Y%m%d-%H%M)
csi=0
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --csi) csi=1; shift ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "nvmm-frames: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
jetpipe=$(realpath "$build/tools/jetpipe")
out=$(realpath -m "$out")
mkdir -p "$out"
failed=0
check() {  # check TITLE COMMAND...: runs COMMAND, prints ok or FAILED with TITLE
  local title=$1
  shift
  if "$@"; then echo "ok      $title"; else echo "FAILED  $title" >&2; failed=1; fi
}

# 1. Built in and mapping here.
"$jetpipe" info > "$out/info.txt" 2>&1
grep "NVMM frames" "$out/info.txt"
check_info() { grep -q "NVMM frames (Jetson Multimedia API): built in, .*: maps here" "$out/info.txt"; }
check "1 NVMM built in and mapping here" check_info

# 2. A clip, encoded on the board.
cat > "$out/gray.yaml" <<'YAML'
platform: auto
stages:
  - {type: gaussian, name: blur, ksize: 3}
  - {type: histogram, name: hist, input: blur, bins: 64}
  - {type: stats, name: stats, input: blur}
YAML
encode() {
  "$jetpipe" run --config config/default.yaml --input "test://blobs?w=1280&h=720&frames=120" \
    --output-dir "$out/encode" --output-video "$out/clip.mp4" > "$out/encode.log" 2>&1
}
check "2 encode clip.mp4 (1280x720, 120 frames)" encode

# 3. The clip with and without NVMM, headless; same results.
same_results() {  # same_results A.jsonl B.jsonl
  python3 - "$1" "$2" <<'PY'
import json, sys
a = [json.loads(l) for l in open(sys.argv[1])]
b = [json.loads(l) for l in open(sys.argv[2])]
bad = [i for i, (x, y) in enumerate(zip(a, b)) if x.get("results") != y.get("results")
       or "error" in x or "error" in y]
print(f"   {len(a)} and {len(b)} records, {len(bad)} differ or failed" + (f": {bad[:10]}" if bad else ""))
sys.exit(0 if len(a) == len(b) == 120 and not bad else 1)
PY
}
nvmm_source() {  # nvmm_source SUMMARY: the source line says NVMM
  python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print("   " + s["source"][:200]); print("   fps %.1f" % s["fps"]); sys.exit(0 if "NVMM surfaces mapped into CUDA" in s["source"] else 1)' "$1"
}
for cfg in "$out/gray.yaml" config/default.yaml; do
  name=$(basename "$cfg" .yaml)
  env -u DISPLAY "$jetpipe" run --config "$cfg" --input "file://$out/clip.mp4" \
    --output-dir "$out/$name-nvmm" > "$out/$name-nvmm.log" 2>&1
  env -u DISPLAY "$jetpipe" run --config "$cfg" --input "file://$out/clip.mp4?nvmm=0" \
    --output-dir "$out/$name-copy" > "$out/$name-copy.log" 2>&1
  check "3 $name: NVMM frames, headless" nvmm_source "$out/$name-nvmm/summary.json"
  check "3 $name: results equal the copying path's" \
    same_results "$out/$name-nvmm/results.jsonl" "$out/$name-copy/results.jsonl"
done

# 4. A CSI camera, when asked.
if [ "$csi" = 1 ]; then
  for mode in nvmm copy; do
    q=""
    [ "$mode" = copy ] && q="?nvmm=0"
    env -u DISPLAY "$jetpipe" run --config config/default.yaml --input "csi://0$q" --max-frames 150 \
      --output-dir "$out/csi-$mode" > "$out/csi-$mode.log" 2>&1
    check "4 csi://0$q: no frame error" python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print("   " + s["source"][:200], "fps %.1f" % s["fps"]); sys.exit(0 if s["frames"]["failed"] == 0 else 1)' "$out/csi-$mode/summary.json"
  done
  check "4 csi://0: NVMM frames" nvmm_source "$out/csi-nvmm/summary.json"
fi
[ $failed -eq 0 ] && echo "nvmm-frames: every check passed ($out)" || echo "nvmm-frames: FAILED ($out)"
[ $failed -eq 0 ]
