#!/usr/bin/env bash
# Peak RSS (VmHWM, from /usr/bin/time -f %M) of a 1080p transcode: gpuencode against ffmpeg with
# the same x264 settings, interleaved (side by side in each round), issue 15's memory target.
#
#   bench/memory.sh [--bin PATH] [--rounds N] [--speed medium|veryfast|...] [CLIP...]
#
# With no CLIP: a 10 s 1080p testsrc2 clip made with the ffmpeg CLI. Sides per round:
#   ffmpeg-plain  ffmpeg -i IN -c:v libx264 -preset SPEED OUT
#   ffmpeg-sepia  the same with -vf colorchannelmixer=<GPUImage's sepia matrix>
#   ours-none / ours-identity / ours-sepia / ours-heavyblur   gpuencode IN OUT --preset P --speed SPEED
#   (each of ours with GPUENCODE_TRANSFER=client and =pbo)
# Prints one line per run: side, clip, peak RSS MiB, wall s.
set -euo pipefail
BIN=.build/release/gpuencode
ROUNDS=1
SPEED=medium
CLIPS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) BIN=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --speed) SPEED=$2; shift 2 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) CLIPS+=("$1"); shift ;;
  esac
done
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
if [ ${#CLIPS[@]} -eq 0 ]; then
  ffmpeg -v error -y -f lavfi -i testsrc2=size=1920x1080:rate=30:duration=10 -f lavfi -i sine=d=10 \
    -c:v libx264 -preset ultrafast -crf 18 -pix_fmt yuv420p -c:a aac -shortest "$TMP/gen1080.mp4"
  CLIPS=("$TMP/gen1080.mp4")
fi
SEPIA='colorchannelmixer=.3588:.7044:.1368:0:.2990:.5870:.1140:0:.2392:.4696:.0912'
measure() { # side clip command...
  local side=$1 clip=$2; shift 2
  /usr/bin/time -f '%M %e' -o "$TMP/t" "$@" >/dev/null 2>&1
  read -r kb s < "$TMP/t"
  printf '%-26s %-24s %6d MiB %7.2f s\n' "$side" "$(basename "$clip")" $((kb / 1024)) "$s"
}
for ((r = 1; r <= ROUNDS; r++)); do
  for clip in "${CLIPS[@]}"; do
    measure ffmpeg-plain "$clip" ffmpeg -v error -y -i "$clip" -c:v libx264 -preset "$SPEED" "$TMP/o.mp4"
    measure ffmpeg-sepia "$clip" ffmpeg -v error -y -i "$clip" -vf "$SEPIA" -c:v libx264 -preset "$SPEED" "$TMP/o.mp4"
    for preset in none identity sepia heavyblur; do
      for transfer in client pbo; do
        # none has no GPU stage, so no transfer path.
        [ "$preset" = none ] && [ "$transfer" = pbo ] && continue
        side="ours-$preset-$transfer"; [ "$preset" = none ] && side=ours-none
        GPUENCODE_TRANSFER=$transfer measure "$side" "$clip" "$BIN" "$clip" "$TMP/o.mp4" -y --preset "$preset" --speed "$SPEED"
      done
    done
  done
done
