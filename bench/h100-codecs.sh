#!/usr/bin/env bash
# The GPU-machine check for the codecs and the restructured pipeline (not a test): run there from
# bundles made with
#   swift build -c release --static-swift-stdlib
#   gpu-bundle-slim .build/release/gpuencode CLIP.mp4   (x265, SVT-AV1 and dav1d NOT stubbed)
#   ff-bundle
# as `bash bench/h100-codecs.sh CLIP.mp4` with $OUT set. It checks, on NVIDIA's GL: both transfer
# paths (pixel buffers, client memory) and --deterministic write the same file for every codec;
# --stats prints the same lines on both paths; hevc with --encoder nvenc/auto where there is no NVENC
# engine; then runs bench/codecs.sh (gpuencode against ffmpeg, same encoder settings).
set -u
F=.gpu/files
CLIP=$F/${1:-t1080_5s.mp4}
OUT=${OUT:-/tmp}
mkdir -p /tmp/bin
printf '#!/bin/bash\nexec bash %s/.ffb/run ffmpeg "$@"\n' "$PWD" >/tmp/bin/ffmpeg
printf '#!/bin/bash\nexec bash %s/.ffb/run ffprobe "$@"\n' "$PWD" >/tmp/bin/ffprobe
printf '#!/bin/bash\nexec bash %s/.gpu/run gpuencode "$@"\n' "$PWD" >/tmp/bin/gpuencode
chmod +x /tmp/bin/*
export PATH=/tmp/bin:$PATH
say() { echo "$*" | tee -a "$OUT/h100-codecs.txt"; }
say "# $(date -u +%FT%TZ) $(nproc) cores; $(gpuencode "$CLIP" --benchmark-filters 5 --preset sepia 2>&1 | tail -n 1)"
W=/tmp/w; mkdir -p $W
for codec in h264 hevc av1; do
  for ext in mp4 mkv; do
    for mode in pbo client; do
      for det in "" --deterministic; do
        GPUENCODE_TRANSFER=$mode gpuencode "$CLIP" $W/o.$ext --preset sepia --codec $codec --speed veryfast --threads 1 -y $det 2>>$OUT/h100-codecs.txt
        rc=$?
        h=$(ffmpeg -v error -i $W/o.$ext -map 0 -c copy -f streamhash -hash md5 - | md5sum | cut -c1-12)
        n=$(ffprobe -v error -count_packets -select_streams v:0 -show_entries stream=nb_read_packets -of csv=p=0 $W/o.$ext)
        say "$codec $ext transfer=$mode ${det:-pipelined}: rc=$rc frames=$n streams=$h"
      done
    done
  done
done
printf '{"version": 2, "name": "avg", "filters": [{"filter": "sepia"}, {"filter": "averageColor"}]}\n' >$W/avg.json
for mode in pbo client; do
  GPUENCODE_TRANSFER=$mode gpuencode "$CLIP" $W/s.mp4 --preset $W/avg.json --stats -y >$W/stats-$mode.txt 2>>$OUT/h100-codecs.txt
  say "--stats transfer=$mode: rc=$? lines=$(wc -l <$W/stats-$mode.txt) md5=$(md5sum <$W/stats-$mode.txt | cut -c1-12)"
done
head -n 2 $W/stats-pbo.txt | tee -a "$OUT/h100-codecs.txt"
gpuencode "$CLIP" $W/n.mp4 --codec hevc --encoder nvenc -y 2>&1 | tail -n 1 | sed 's/^/nvenc: /' | tee -a "$OUT/h100-codecs.txt"; say "rc=${PIPESTATUS[0]}"
gpuencode "$CLIP" $W/n.mp4 --codec hevc --encoder auto --speed veryfast -y 2>&1 | tail -n 1 | sed 's/^/auto: /' | tee -a "$OUT/h100-codecs.txt"
ffprobe -v error -show_entries stream=codec_name,codec_tag_string -of csv $W/n.mp4 | tee -a "$OUT/h100-codecs.txt"
bash bench/codecs.sh --runs 3 --clip "$CLIP" --bin /tmp/bin/gpuencode --speed veryfast --out "$OUT/h100-codecs.md" 2>>"$OUT/h100-codecs.txt" | tail -n 25
