#!/usr/bin/env bash
# Peak RSS (VmHWM, from /usr/bin/time -f %M) of a 1080p transcode: gpuencode against ffmpeg with
# the same x264 settings, interleaved (side by side in each round), issue 15's memory target.
#
#   bench/memory.sh [--bin PATH] [--base PATH] [--presets "none sepia ..."] [--rounds N]
#                   [--speed medium|veryfast|...] [CLIP...]
#
# --base PATH: an earlier build, run right before --bin in each of ours (its sides end in "-base"),
# for before/after figures from one interleaved run. --presets: which of ours (default all four).
# With no CLIP: a 10 s 1080p testsrc2 clip made with the ffmpeg CLI. Sides per round:
#   ffmpeg-plain  ffmpeg -i IN -c:v libx264 -preset SPEED OUT
#   ffmpeg-sepia  the same with -vf colorchannelmixer=<GPUImage's sepia matrix>
#   ours-none / ours-identity / ours-sepia / ours-heavyblur   gpuencode IN OUT --preset P --speed SPEED
#   (each of ours with GPUENCODE_TRANSFER=client and =pbo)
# Prints one line per run: side, clip, peak RSS MiB, wall s, CPU s (user + system: steadier than
# wall on a loaded machine).
set -euo pipefail
BIN=.build/release/gpuencode
ROUNDS=1
SPEED=medium
BASE=
PRESETS="none identity sepia heavyblur"
CLIPS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) BIN=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --speed) SPEED=$2; shift 2 ;;
    --base) BASE=$2; shift 2 ;;
    --presets) PRESETS=$2; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
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
  /usr/bin/time -f '%M %e %U %S' -o "$TMP/t" "$@" >/dev/null 2>&1
  read -r kb s user sys < "$TMP/t"
  printf '%-30s %-24s %6d MiB %7.2f s %7.2f s CPU\n' "$side" "$(basename "$clip")" $((kb / 1024)) "$s" "$(echo "$user + $sys" | bc)"
}
for ((r = 1; r <= ROUNDS; r++)); do
  for clip in "${CLIPS[@]}"; do
    measure ffmpeg-plain "$clip" ffmpeg -v error -y -i "$clip" -c:v libx264 -preset "$SPEED" "$TMP/o.mp4"
    measure ffmpeg-sepia "$clip" ffmpeg -v error -y -i "$clip" -vf "$SEPIA" -c:v libx264 -preset "$SPEED" "$TMP/o.mp4"
    for preset in $PRESETS; do
      for transfer in client pbo; do
        # none has no GPU stage, so no transfer path.
        [ "$preset" = none ] && [ "$transfer" = pbo ] && continue
        side="ours-$preset-$transfer"; [ "$preset" = none ] && side=ours-none
        [ -n "$BASE" ] && GPUENCODE_TRANSFER=$transfer measure "$side-base" "$clip" "$BASE" "$clip" "$TMP/o.mp4" -y --preset "$preset" --speed "$SPEED"
        GPUENCODE_TRANSFER=$transfer measure "$side" "$clip" "$BIN" "$clip" "$TMP/o.mp4" -y --preset "$preset" --speed "$SPEED"
      done
    done
  done
done
