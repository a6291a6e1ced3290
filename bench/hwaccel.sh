#!/usr/bin/env bash
# NVDEC (--hwaccel cuda) against software decoding, and the NVENC options, on the GPU machine (not
# a test). Make a bundle here with
#   swift build -c release --static-swift-stdlib
#   ../shared/tools/gpu-bundle .build/release/gpuencode CLIP.mp4 [MORE.mp4 ...]
# and run there, with $OUT set (the device tool's output folder), as
#   bash bench/hwaccel.sh [CLIP.mp4 [MORE.mp4 ...]]      (names of files in .gpu/files; default t1080.mp4)
# The machine has no ffmpeg, so correctness is gpuencode against itself: with lossless x264
# (ultrafast, crf 0) and --deterministic, the NVDEC and software runs must write identical files.
# Then wall times of transcodes with --preset none (decode + encode only) and --preset sepia,
# with and without --hwaccel cuda, interleaved. Results go to stdout and $OUT/hwaccel.txt.
set -u
G=(bash .gpu/run gpuencode)
F=.gpu/files
OUT=${OUT:-/tmp}
RUNS=${RUNS:-3}
LOG="$OUT/hwaccel.txt"
T="$OUT/hw-t.mp4"
say() { echo "$*" | tee -a "$LOG"; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
[ $# -gt 0 ] || set -- t1080.mp4

say "# $(date -u +%FT%TZ) $(nproc) cores; $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || echo 'no nvidia-smi')"

say "## options on this machine"
"${G[@]}" "$F/$1" "$T" -y --preset none --hwaccel cuda --x264-preset ultrafast -v 2>&1 | grep -E "decoder|NVDEC|encoder:|error" | tee -a "$LOG"
"${G[@]}" "$F/$1" "$T" -y --preset none --encoder auto --x264-preset ultrafast 2>&1 | sed 's/^/encoder auto: /' | tee -a "$LOG"
say "encoder auto exit: ${PIPESTATUS[0]} (expected 0, with a warning where there is no NVENC engine)"
"${G[@]}" "$F/$1" "$T" -y --preset none --encoder nvenc --x264-preset ultrafast 2>&1 | sed 's/^/encoder nvenc: /' | tee -a "$LOG"
say "encoder nvenc exit: ${PIPESTATUS[0]} (69 where there is no NVENC engine, as on the H100; 0 where there is one)"

for clip in "$@"; do
  C="$F/$clip"
  say "## $clip: NVDEC output against software decoding (x264 lossless, --deterministic)"
  for p in none sepia; do
    "${G[@]}" "$C" "$OUT/hw-sw.mp4" -y --preset "$p" --x264-preset ultrafast --crf 0 --deterministic 2>>"$LOG"
    "${G[@]}" "$C" "$OUT/hw-cuda.mp4" -y --preset "$p" --x264-preset ultrafast --crf 0 --deterministic --hwaccel cuda 2>>"$LOG"
    if cmp -s "$OUT/hw-sw.mp4" "$OUT/hw-cuda.mp4"; then same=identical; else same=DIFFERENT; fi
    say "preset $p: cuda $(stat -c %s "$OUT/hw-cuda.mp4" 2>/dev/null) bytes, software $(stat -c %s "$OUT/hw-sw.mp4" 2>/dev/null) bytes: $same"
  done
  rm -f "$OUT/hw-sw.mp4" "$OUT/hw-cuda.mp4"

  say "## $clip: transcode wall seconds, x264 ultrafast crf 23 (interleaved, $RUNS runs)"
  for r in $(seq "$RUNS"); do
    for p in none sepia; do
      for hw in none cuda; do
        t0=$(date +%s.%N)
        line=$("${G[@]}" "$C" "$T" -y --preset "$p" --hwaccel "$hw" --x264-preset ultrafast --crf 23 -v 2>&1 | grep -E "wrote|error|stages busy" | tr '\n' ' ')
        t1=$(date +%s.%N)
        say "$clip preset $p hwaccel $hw run $r: $(secs "$t0" "$t1") s | $line"
      done
    done
  done
done
rm -f "$T"
