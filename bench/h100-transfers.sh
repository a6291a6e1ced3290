#!/usr/bin/env bash
# Where the H100's filter stage spends its time, and which transfer variant is fastest (not a test).
# Pack here with
#   swift build -c release --static-swift-stdlib
#   ../shared/tools/gpu-bundle-slim .build/release/gpuencode t720.mp4 t1080.mp4 t2160.mp4
# (t720/t1080/t2160: testsrc2 at 1280x720 (10 frames), 1920x1080 and 3840x2160 (1 s), yuv420p H.264) and run there, with $OUT
# set, as `bash bench/h100-transfers.sh`. Variants, through the environment the CLI reads:
#   GPUENCODE_MAPPING=mapped|persistent   pixel buffers mapped per transfer, or once for good
#   GPUENCODE_DEPTH=2|3                   frames in flight
#   GPUENCODE_COPY_THREADS=N              threads copying through the mapped buffers
#   GPUENCODE_STAGES=1                    per-stage GPU time (timer queries) and CPU time, one frame at a time
#   GPUENCODE_COMPUTE=1|0                 the single-pass shader as compute or fragment
# Rounds are interleaved (every variant once per round); medians are what to quote.
set -u
G=(bash .gpu/run gpuencode)
F=.gpu/files
OUT=${OUT:-/tmp}
LOG="$OUT/transfers.txt"
say() { echo "$*" | tee -a "$LOG"; }
fps() { sed -n 's/^filter stage: \([0-9.]*\) fps.*/\1/p'; }
say "# $(date -u +%FT%TZ) $(nproc) cores; $(nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv,noheader 2>/dev/null)"
"${G[@]}" "$F/t1080.mp4" --benchmark-filters 10 --preset sepia >/dev/null 2>&1   # unpack, warm the driver

say "## correctness: compute and fragment passes, 10 frames of 720p, lossless (compared with ffmpeg back home)"
for p in sepia heavyblur; do for c in 0 1; do
  GPUENCODE_COMPUTE=$c "${G[@]}" "$F/t720.mp4" "$OUT/$p-c$c.mkv" -y --preset $p --x264-preset ultrafast --crf 0 --deterministic 2>&1 | tail -1
done; done

say "## stages, one frame at a time (ms per frame), compute, persistent"
for v in "t1080 sepia" "t1080 heavyblur" "t2160 sepia" "t2160 heavyblur"; do
  set -- $v
  say "$1 $2: $(GPUENCODE_STAGES=1 "${G[@]}" "$F/$1.mp4" --benchmark-filters 100 --preset $2 2>&1 | sed -n 's/^stages, one frame at a time: //p')"
done

say "## filter stage fps: compute/depth/copy threads: per-round values (interleaved)"
variants=("1 2 4" "1 2 8" "1 3 8" "1 2 2" "0 3 4")
cases=("t1080 sepia 5000" "t1080 identity 5000" "t1080 1977 5000" "t1080 heavyblur 3000" "t2160 sepia 1500" "t2160 heavyblur 800")
declare -A res
for r in 1 2; do
  for v in "${variants[@]}"; do
    for p in "${cases[@]}"; do
      set -- $v $p
      x=$(GPUENCODE_COMPUTE=$1 GPUENCODE_DEPTH=$2 GPUENCODE_COPY_THREADS=$3 "${G[@]}" "$F/$4.mp4" --benchmark-filters $6 --preset $5 2>&1 | fps)
      res["$v $p"]+="$x "
    done
  done
done
for p in "${cases[@]}"; do for v in "${variants[@]}"; do say "$p | compute/depth/threads $v: ${res["$v $p"]}"; done; done

say "## GPU and PCIe while sepia runs (nvidia-smi dmon)"
(nvidia-smi dmon -s put -c 5 2>&1 | tee -a "$LOG") &
"${G[@]}" "$F/t1080.mp4" --benchmark-filters 15000 --preset sepia 2>&1 | tee -a "$LOG"
wait
for n in 2 4; do
  say "## $n processes at once, sepia 1080p"
  for i in $(seq $n); do "${G[@]}" "$F/t1080.mp4" --benchmark-filters 8000 --preset sepia > "$OUT/multi$i.txt" 2>&1 & done; wait
  cat "$OUT"/multi*.txt | tee -a "$LOG"; rm -f "$OUT"/multi*.txt
done
