#!/usr/bin/env bash
# Dolby Vision on the GPU machine: the iPhone's profile 8.4 clip decoded in software and on NVDEC
# (--hwaccel cuda, CUDA-GL interop) must apply the same RPUs and give the same frames (lossless x264
# out, ffmpeg's framemd5 and PSNR as the oracle); the -v lines say which path ran. Bundle the clip:
#   ../shared/tools/gpu-bundle-slim .build/release/gpuencode ../shared/media/iphone_hevc10_hlg_dolbyvision_rot90_0.1s.mov
#   ../shared/tools/ff-bundle
#   (device) bash Tests/Device/dolby-vision.sh
set -u
G=(bash .gpu/run gpuencode)
FF=(bash .ffb/run ffmpeg)
OUT=${OUT:-/tmp}
C=.gpu/files/iphone_hevc10_hlg_dolbyvision_rot90_0.1s.mov
W=$(mktemp -d)
fails=0
for mode in apply base; do
  "${G[@]}" "$C" "$W/sw-$mode.mkv" -y --crf 0 --speed ultrafast --dolby-vision $mode -v 2> "$W/sw-$mode.txt" || { echo "FAIL software $mode"; fails=$((fails+1)); }
  "${G[@]}" "$C" "$W/hw-$mode.mkv" -y --crf 0 --speed ultrafast --dolby-vision $mode --hwaccel cuda -v 2> "$W/hw-$mode.txt" || { echo "FAIL nvdec $mode"; fails=$((fails+1)); }
  grep -i "dolby" "$W/sw-$mode.txt" | sed "s/^/software $mode: /"
  grep -i "dolby\|interop\|nvdec" "$W/hw-$mode.txt" | sed "s/^/nvdec $mode: /"
  a=$("${FF[@]}" -nostdin -v error -i "$W/sw-$mode.mkv" -map 0:v -f framemd5 - | grep -v '^#' | cut -d, -f6)
  b=$("${FF[@]}" -nostdin -v error -i "$W/hw-$mode.mkv" -map 0:v -f framemd5 - | grep -v '^#' | cut -d, -f6)
  if [ "$a" = "$b" ] && [ -n "$a" ]; then echo "SAME $mode: $(echo "$a" | wc -l) frames identical"; else
    echo "DIFF $mode: $("${FF[@]}" -nostdin -i "$W/sw-$mode.mkv" -i "$W/hw-$mode.mkv" -lavfi '[0:v]settb=1/30,setpts=N[a];[1:v]settb=1/30,setpts=N[b];[a][b]psnr' -f null - 2>&1 | grep -o 'average:[^ ]*')"; fails=$((fails+1)); fi
done
cp "$W"/*.mkv "$OUT/" 2>/dev/null
echo "$fails failed so far"
# The narrow-picture heap overrun (x265's cutree at 49 pixels wide or less) on this machine too.
"${G[@]}" "$C" "$W/h64.mp4" -y --height 64 --hdr keep -v 2> "$W/h64.txt"; rc=$?
echo "height 64 --hdr keep: exit $rc, $(grep -i cutree "$W/h64.txt" | head -1)"
[ $rc -eq 0 ] || fails=$((fails+1))
exit $fails
