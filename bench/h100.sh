#!/usr/bin/env bash
# The GPU-machine benchmark (not a test): run there from a bundle made with
#   swift build -c release --static-swift-stdlib
#   ../shared/tools/gpu-bundle .build/release/gpuencode CLIP_1080P.mp4 CLIP_2160P.mp4
# as `bash bench/h100.sh` with $OUT set (the device tool's output folder). The machine has no
# ffmpeg, so transcodes compare gpuencode with itself (--preset none is the floor) and pictures
# come back as PNGs to be compared with llvmpipe's here.
set -u
G=(bash .gpu/run gpuencode)
F=.gpu/files
C1080=$F/${1:-t1080.mp4}
C2160=$F/${2:-t2160.mp4}
OUT=${OUT:-/tmp}
say() { echo "$*" | tee -a "$OUT/h100.txt"; }
say "# $(date -u +%FT%TZ) $(nproc) cores"
"${G[@]}" "$C1080" --benchmark-filters 10 --preset sepia 2>&1 | tee -a "$OUT/h100.txt"

say "## filter stage (frames in memory: upload, filters, readback; pipelined PBO readback)"
for r in 1 2 3; do
  for p in sepia 1977 heavyblur identity; do
    "${G[@]}" "$C1080" --benchmark-filters 3000 --preset "$p" 2>&1 | tee -a "$OUT/h100.txt"
  done
done
for r in 1 2; do
  for p in sepia 1977 heavyblur; do
    "${G[@]}" "$C2160" --benchmark-filters 600 --preset "$p" 2>&1 | tee -a "$OUT/h100.txt"
  done
done
say "## variants: synchronous readback, one copy thread, client-memory transfers (1080p sepia)"
for r in 1 2; do
  GPUENCODE_SYNC=1 "${G[@]}" "$C1080" --benchmark-filters 3000 --preset sepia 2>&1 | sed 's/^/sync: /' | tee -a "$OUT/h100.txt"
  GPUENCODE_COPY_THREADS=1 "${G[@]}" "$C1080" --benchmark-filters 3000 --preset sepia 2>&1 | sed 's/^/1 copy thread: /' | tee -a "$OUT/h100.txt"
  GPUENCODE_TRANSFER=client "${G[@]}" "$C1080" --benchmark-filters 3000 --preset sepia 2>&1 | sed 's/^/client: /' | tee -a "$OUT/h100.txt"
  GPUENCODE_COPY_THREADS=8 "${G[@]}" "$C1080" --benchmark-filters 3000 --preset sepia 2>&1 | sed 's/^/8 copy threads: /' | tee -a "$OUT/h100.txt"
done

say "## transcode, x264 veryfast crf 23, wall seconds (interleaved)"
for r in 1 2 3; do
  for p in none sepia 1977 heavyblur; do
    t0=$(date +%s.%N)
    "${G[@]}" "$C1080" "$OUT/t.mp4" --preset "$p" -y --x264-preset veryfast --crf 23 2>>"$OUT/h100.txt"
    t1=$(date +%s.%N)
    say "transcode $p run $r: $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') s"
  done
done
say "## the same on a 30 s clip (start-up costs weigh less)"
for r in 1 2 3; do
  for p in none sepia 1977; do
    t0=$(date +%s.%N)
    "${G[@]}" "$F/t1080_30s.mp4" "$OUT/t.mp4" --preset "$p" -y --x264-preset veryfast --crf 23 2>>"$OUT/h100.txt"
    t1=$(date +%s.%N)
    say "transcode 30 s $p run $r: $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') s"
  done
done
"${G[@]}" "$C1080" "$OUT/t.mp4" --preset sepia -y --x264-preset veryfast -v 2>&1 | grep -i "GPU:" | tee -a "$OUT/h100.txt"
rm -f "$OUT/t.mp4"
say "## pictures for comparison with llvmpipe"
for p in 1977 heavyblur toaster tiltshift; do
  "${G[@]}" preview "$C1080" --preset "$p" --at 5 -o "$OUT/gpu-$p.png" -y -v 2>&1 | tee -a "$OUT/h100.txt"
done
