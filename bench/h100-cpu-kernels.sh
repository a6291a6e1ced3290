#!/usr/bin/env bash
# On the GPU machine: what the CPU kernels' planning costs where the renderer is a GPU (it never
# chooses them there). Interleaved rounds of the same 1080p transcode (sepia, or LOOK), default against
# GPUENCODE_CPU_KERNELS=0 (which skips the context-free plan and its display probe), wall seconds
# from `date` around each whole process, and -v's lines saying where the frames were filtered.
#   run  command: bash bench/h100-cpu-kernels.sh [ROUNDS] [LOOK]      carry: [".gpu"]
set -euo pipefail
ROUNDS=${1:-5}
LOOK=${2:-sepia}
CLIP=.gpu/files/t1080.mp4
OUT=${OUT:-/tmp}
G=(bash .gpu/run gpuencode)
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
"${G[@]}" "$CLIP" "$OUT/v.mp4" -y --preset "$LOOK" -v 2>&1 | grep -E "GPU: |on the CPU|pass 1" | head -5
wall() { local t0 t1; t0=$(date +%s%N); "$@" >/dev/null 2>&1; t1=$(date +%s%N); echo "$(( (t1 - t0) / 1000000 )) ms"; }
for r in $(seq "$ROUNDS"); do
  a=$(wall "${G[@]}" "$CLIP" "$OUT/a.mp4" -y --preset "$LOOK" --x264-preset veryfast --crf 23)
  b=$(wall env GPUENCODE_CPU_KERNELS=0 "${G[@]}" "$CLIP" "$OUT/b.mp4" -y --preset "$LOOK" --x264-preset veryfast --crf 23)
  echo "round $r ($LOOK): default $a, GPUENCODE_CPU_KERNELS=0 $b"
done
