#!/usr/bin/env bash
# Batch throughput benchmark (not a test): files per minute of `gpuencode batch` on 16 short 720p
# clips for --jobs 1, 2, the default and (on bigger machines) a few more, so the default can be
# checked against the best (it must be within 10%).
#
#   bash bench/batch.sh [CLIP_FOLDER]            here: makes the 16 clips with ffmpeg when no folder is given
#   bash bench/batch.sh --make-clips DIR         only make the clips (to ship them to a machine without ffmpeg)
#
# On the GPU machine (no ffmpeg there): make the clips here, bundle them, run from the bundle:
#   bash bench/batch.sh --make-clips /tmp/bclips
#   swift build -c release --static-swift-stdlib
#   ../shared/tools/gpu-bundle .build/release/gpuencode /tmp/bclips/*.mp4
#   (device) GPUENCODE="bash .gpu/run gpuencode" bash bench/batch.sh .gpu/files
# With FFMPEG set (a command: ffmpeg, or `bash .ffb/run ffmpeg` from ../shared/tools/ff-bundle) each round also
# runs what a user would do instead: `xargs -P N` over the clips, one ffmpeg per clip with the CPU sepia
# (colorchannelmixer with GPUImage's matrix, as bench/gpu-peers.sh), audio copied, x264 at the same preset,
# for the same N, and the same without a filter (the floor: decode and x264); the summary prints each
# side's best files/min and the ratios.
# Environment: GPUENCODE (the command; default .build/release/gpuencode), PRESET (sepia), X264 (veryfast),
# REPEATS (2), SECONDS_PER_CLIP (4) and CLIP_CRF (23; 40 keeps a bundle small) when making clips, OUT (results folder; default /tmp).
set -u
OUT=${OUT:-/tmp}
G=${GPUENCODE:-.build/release/gpuencode}
PRESET=${PRESET:-sepia}
X264=${X264:-veryfast}
REPEATS=${REPEATS:-2}
make_clips() {
  mkdir -p "$1"
  for i in $(seq -w 1 16); do
    ffmpeg -nostdin -v error -y -f lavfi -i "testsrc2=size=1280x720:rate=30" \
      -f lavfi -i "sine=frequency=$((200 + 10#$i * 40)):sample_rate=48000" -t "${SECONDS_PER_CLIP:-4}" \
      -c:v libx264 -preset veryfast -crf "${CLIP_CRF:-23}" -pix_fmt yuv420p -c:a aac -b:a 96k "$1/clip$i.mp4"
  done
}
if [ "${1:-}" = "--make-clips" ]; then make_clips "${2:?folder}"; exit; fi
CLIPS=${1:-}
if [ -z "$CLIPS" ]; then CLIPS=$(mktemp -d); make_clips "$CLIPS"; fi
n=$(ls "$CLIPS"/*.mp4 | wc -l)
cores=$(nproc)
# BatchRunOptions.defaultJobs: one job per 4 cores, at least 2 (1 on one core); one per 2 cores where the jobs
# share a hardware GPU's context (the H100 machine): the "default" line names the llvmpipe figure.
default=$(( cores <= 1 ? 1 : (cores / 4 > 2 ? cores / 4 : 2) ))
list="1 2 $default"
[ "$cores" -ge 8 ] && list="$list 4 8"
[ "$cores" -ge 16 ] && list="$list 16"
list=$(echo $list | tr ' ' '\n' | awk '!seen[$0]++' | tr '\n' ' ')
res="$OUT/batch-bench.txt"
echo "# $(date -u +%FT%TZ) $cores cores, $n clips from $CLIPS, preset $PRESET, x264 $X264, default --jobs $default" | tee -a "$res"
for r in $(seq 1 "$REPEATS"); do
  for j in $list; do
    o=$(mktemp -d)
    t0=$(date +%s.%N)
    $G batch "$CLIPS" --out-dir "$o" --preset "$PRESET" --x264-preset "$X264" --jobs "$j" --progress none --report "$o/r.json" 2>>"$res"
    rc=$?
    t1=$(date +%s.%N)
    fpm=$(awk -v a="$t0" -v b="$t1" -v n="$n" 'BEGIN { printf "%.1f", n * 60 / (b - a) }')
    renderer=$(sed -n 's/.*"renderer": "\(.*\)".*/\1/p' "$o/r.json" | head -1)
    echo "jobs=$j run=$r rc=$rc files/min=$fpm wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')s renderer=$renderer" | tee -a "$res"
    rm -rf "$o"
    if [ -n "${FFMPEG:-}" ]; then
      # The CPU sepia, then (ffmpeg-plain-xargs) no filter at all: decoding and x264 alone, the floor
      # every side pays, which a faster filter stage cannot go below.
      for side in ffmpeg-xargs ffmpeg-plain-xargs; do
        vf='colorchannelmixer=.3588:.7044:.1368:0:.2990:.5870:.1140:0:.2392:.4696:.0912'
        [ $side = ffmpeg-plain-xargs ] && vf=null
        o=$(mktemp -d)
        t0=$(date +%s.%N)
        ls "$CLIPS"/*.mp4 | xargs -P "$j" -I{} sh -c 'f="$1"; '"$FFMPEG"' -nostdin -v error -y -i "$f" -map 0 -vf "$2" -c:v libx264 -preset "$3" -crf 23 -pix_fmt yuv420p -c:a copy "$4/$(basename "$f" .mp4).m4v"' \
          _ {} "$vf" "$X264" "$o" 2>>"$res"
        rc=$?
        t1=$(date +%s.%N)
        fpm=$(awk -v a="$t0" -v b="$t1" -v n="$n" 'BEGIN { printf "%.1f", n * 60 / (b - a) }')
        echo "$side P=$j run=$r rc=$rc files/min=$fpm wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')s written=$(ls "$o" | wc -l)" | tee -a "$res"
        rm -rf "$o"
      done
    fi
  done
done
if [ -n "${FFMPEG:-}" ]; then
  best() { grep "^$1" "$res" | tail -n $(( REPEATS * $(echo $list | wc -w) )) | sed -n 's/.*files\/min=\([0-9.]*\).*/\1/p' | sort -g | tail -1; }
  g=$(best "jobs="); f=$(best "ffmpeg-xargs"); p=$(best "ffmpeg-plain-xargs")
  echo "best files/min: gpuencode batch $g, ffmpeg xargs (CPU sepia) $f, ratio $(awk -v a="$g" -v b="$f" 'BEGIN { printf "%.2f", a / b }')x; ffmpeg xargs without a filter $p ($(awk -v a="$g" -v b="$p" 'BEGIN { printf "%.2f", a / b }')x)" | tee -a "$res"
fi
