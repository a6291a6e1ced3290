#!/usr/bin/env bash
# Filter stage on the H100: a baseline build against a new one, interleaved round by round (not a test).
# Pack here with
#   swift build -c release --static-swift-stdlib        (each build; copy the binaries to BASE and NEW)
#   xz -T2 -c BASE > gpuencode-base.xz; xz -T2 -c NEW > gpuencode-new.xz
#   ../shared/tools/gpu-bundle-slim NEW gpuencode-base.xz gpuencode-new.xz t1080.mp4 t2160.mp4 d1080.mp4 l1080.mp4
# (testsrc2, yuv420p H.264 veryfast: t1080 1920x1080 and t2160 3840x2160 of 1 s, d1080 of 2 s and l1080 of 10 s at
# 1920x1080) and run there, with $OUT set, as `bash bench/h100-copies.sh [ROUNDS]` (GPU=DIR: the bundle elsewhere
# than .gpu). Both builds run with their defaults (GPUENCODE_* variables pass through to both). It prints:
# - lossless transcodes of d1080 by both builds, pipelined (not --deterministic: that renders one frame at a
#   time); they come back under $OUT: compare `ffmpeg -i X -map 0:v -c copy -f framemd5 -` here;
# - per-round filter-stage fps of both builds: 1080p sepia, 1080p heavyblur, 2160p sepia;
# - stage times (GPUENCODE_STAGES=1, one frame at a time) and whole transcodes of l1080 (wall seconds).
set -u
ROUNDS=${1:-5}
GPU=${GPU:-.gpu}
F=$GPU/files
OUT=${OUT:-/tmp}
LOG="$OUT/copies.txt"
B=(gpuencode-base gpuencode-new)
say() { echo "$*" | tee -a "$LOG"; }
fps() { sed -n 's/^filter stage: \([0-9.]*\) fps.*/\1/p'; }
run() { local b=$1; shift; bash "$GPU/run" "$b" "$@"; }
say "# $(date -u +%FT%TZ) $(nproc) cores; $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)"
run gpuencode "$F/t1080.mp4" --benchmark-filters 10 --preset sepia >/dev/null 2>&1   # unpacks the bundle
for b in "${B[@]}"; do
  xz -dc "$F/$b.xz" > "/tmp/gpu-bundle/bin/$b" && chmod +x "/tmp/gpu-bundle/bin/$b"
  run "$b" "$F/t1080.mp4" --benchmark-filters 10 --preset sepia >/dev/null 2>&1
done

say "## correctness: 2 s of 1080p, x264 ultrafast crf 0, pipelined"
for p in sepia heavyblur; do for b in "${B[@]}"; do
  run "$b" "$F/d1080.mp4" "$OUT/$p-$b.mkv" -y --preset $p --x264-preset ultrafast --crf 0 --threads 8 2>&1 | tail -1
done; done

say "## filter stage fps, per round (interleaved)"
cases=("t1080 sepia 3000" "t1080 heavyblur 3000" "t2160 sepia 1500")
declare -A res
for r in $(seq "$ROUNDS"); do
  for c in "${cases[@]}"; do for b in "${B[@]}"; do
    set -- $c
    res["$b $c"]+="$(run "$b" "$F/$1.mp4" --benchmark-filters $3 --preset $2 2>&1 | fps) "
  done; done
done
for c in "${cases[@]}"; do for b in "${B[@]}"; do say "$c | $b: ${res["$b $c"]}"; done; done

say "## stages, one frame at a time (ms per frame)"
for c in "t1080 sepia" "t1080 heavyblur" "t2160 sepia"; do for b in "${B[@]}"; do
  set -- $c
  say "$1 $2 $b: $(GPUENCODE_STAGES=1 run "$b" "$F/$1.mp4" --benchmark-filters 200 --preset $2 2>&1 | sed -n 's/^stages, one frame at a time: //p')"
done; done

say "## whole transcode, 10 s 1080p, sepia, x264 veryfast crf 23: wall s per round"
declare -A tr
for r in 1 2 3; do for b in "${B[@]}"; do
  s=$(date +%s.%N); run "$b" "$F/l1080.mp4" /tmp/tr.mp4 -y --preset sepia --x264-preset veryfast >/dev/null 2>&1
  tr["$b"]+="$(awk -v a="$s" -v b="$(date +%s.%N)" 'BEGIN{printf "%.2f", b - a}') "
done; done
for b in "${B[@]}"; do say "transcode $b: ${tr["$b"]}"; done
