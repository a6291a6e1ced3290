#!/usr/bin/env bash
# Every built-in look and every threshold-deciding filter rendered on the GPU machine's NVIDIA GL,
# one frame each of real clips, as PNGs packed into $OUT/looks-nvidia-CLIP.tar; Tests/Device/look-parity.py
# renders the same here on llvmpipe and compares them. Make the bundle here and run it there:
#   swift build -c release --static-swift-stdlib && strip .build/release/gpuencode
#   ../shared/tools/gpu-bundle-slim .build/release/gpuencode CLIP...
#   (device) bash Tests/Device/look-parity.sh
set -u
G=(bash .gpu/run gpuencode)
OUT=${OUT:-/tmp}
W=$(mktemp -d)
source "$(dirname "$0")/look-parity.list"
n=0; fails=0
for clip in .gpu/files/*.mp4; do
  c=$(basename "$clip" .mp4)
  for look in "${LOOKS[@]}"; do
    "${G[@]}" preview "$clip" --preset "$look" --at 0.5 -o "$W/$c--$look.png" --gpu hardware 2>>"$W/errors.txt" || { echo "FAIL $c $look" >>"$W/errors.txt"; fails=$((fails+1)); }
    n=$((n+1))
  done
  for i in "${!FILTERS[@]}"; do
    "${G[@]}" preview "$clip" --preset identity --filter "${FILTERS[$i]}" --at 0.5 -o "$W/$c--filter$i.png" --gpu hardware 2>>"$W/errors.txt" || { echo "FAIL $c ${FILTERS[$i]}" >>"$W/errors.txt"; fails=$((fails+1)); }
    n=$((n+1))
  done
done
"${G[@]}" --version > "$W/version.txt" 2>&1
# $OUT takes at most 8 files of 16 MiB: one tar per clip.
for clip in .gpu/files/*.mp4; do c=$(basename "$clip" .mp4); tar -C "$W" -cf "$OUT/looks-nvidia-$c.tar" $(cd "$W" && ls "$c"--*.png); done
cp "$W/errors.txt" "$W/version.txt" "$OUT/" 2>/dev/null
echo "$n renders, $fails failed"
