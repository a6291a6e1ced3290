#!/usr/bin/env bash
# The optimized plan against the reference (`--no-optimize`) on the GPU machine's NVIDIA GL: every
# built-in look transcoded losslessly from each packed clip both ways on the same GPU, and the PSNR
# of one against the other (ffmpeg's psnr filter from the ff-bundle). What OptimizedPlanTests checks
# on llvmpipe, for the passes a GPU's cost model chooses. Make the bundles here and run it there:
#   swift build -c release --static-swift-stdlib && strip .build/release/gpuencode
#   ../shared/tools/gpu-bundle-slim .build/release/gpuencode CLIP... && ../shared/tools/ff-bundle
#   (device) bash Tests/Device/optimized-parity.sh        carry: [".gpu", ".ffb"]
# Prints one line per look and clip (Y/U/V PSNR, or "identical"); exits 1 when any is below 50 dB.
set -u
G=(bash .gpu/run gpuencode)
FF=(bash .ffb/run ffmpeg)
OUT=${OUT:-/tmp}
W=$(mktemp -d)
looks=$("${G[@]}" --list-presets | awk '$1 != "none" { print $1 }')
low=0
for clip in .gpu/files/*.mp4 .gpu/files/*.webm; do
  [ -f "$clip" ] || continue
  c=$(basename "$clip")
  for look in $looks; do
    "${G[@]}" "$clip" "$W/o.mkv" -y -t 0.5 --preset "$look" --crf 0 --x264-preset ultrafast --gpu hardware 2>>"$W/errors.txt"
    "${G[@]}" "$clip" "$W/r.mkv" -y -t 0.5 --preset "$look" --crf 0 --x264-preset ultrafast --gpu hardware --no-optimize 2>>"$W/errors.txt"
    line=$("${FF[@]}" -hide_banner -i "$W/o.mkv" -i "$W/r.mkv" -lavfi "[0:v]setpts=N[a];[1:v]setpts=N[b];[a][b]psnr" -f null - 2>&1 | grep "PSNR y:" | tail -1)
    y=$(sed -E 's/.* y:([0-9.inf]+).*/\1/' <<<"$line"); u=$(sed -E 's/.* u:([0-9.inf]+).*/\1/' <<<"$line"); v=$(sed -E 's/.* v:([0-9.inf]+).*/\1/' <<<"$line")
    echo "$c $look y=$y u=$u v=$v" | tee -a "$OUT/optimized-parity.txt"
    for p in $y $u $v; do
      [ "$p" = "inf" ] && continue
      awk -v p="$p" 'BEGIN { exit !(p < 50) }' && low=$((low + 1))
    done
  done
done
echo "$low planes below 50 dB" | tee -a "$OUT/optimized-parity.txt"
[ "$low" -eq 0 ]
