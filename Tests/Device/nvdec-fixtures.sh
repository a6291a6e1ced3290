#!/usr/bin/env bash
# The clips Tests/Device/nvdec-interop.sh reads, made with the ffmpeg CLI into DIR (two come from
# ../shared/media). bash Tests/Device/nvdec-fixtures.sh DIR
set -eu
D=${1:?usage: nvdec-fixtures.sh DIR}
M=$(cd "$(dirname "$0")/../../.." && pwd)/shared/media
mkdir -p "$D"
F=(ffmpeg -hide_banner -v error -nostdin -y)
# 10 s of 1080p30 H.264 with audio (timings, and the packed 8-bit path).
"${F[@]}" -f lavfi -i testsrc2=size=1920x1080:rate=30 -f lavfi -i sine=frequency=440:sample_rate=48000 -t 10 \
  -c:v libx264 -preset veryfast -crf 23 -pix_fmt yuv420p -colorspace bt709 -color_primaries bt709 -color_trc bt709 -c:a aac "$D/t1080.mp4"
# 1080i, top field first (the deinterlacer's history filled from CUDA).
"${F[@]}" -f lavfi -i testsrc2=size=1920x1080:rate=50 -t 2 -vf tinterlace=4,setfield=tff \
  -c:v libx264 -preset veryfast -crf 20 -flags +ildct+ilme -x264opts tff=1 -pix_fmt yuv420p "$D/i1080.mp4"
# A width that is not a multiple of 4 (the packed planes' last texel).
"${F[@]}" -f lavfi -i testsrc2=size=322x242:rate=25 -t 1 -c:v libx264 -preset veryfast -crf 18 -pix_fmt yuv420p "$D/odd.mp4"
# HEVC 4:4:4: NVDEC decodes it, but not into NV12/P010, so the GPU stage downloads it.
"${F[@]}" -f lavfi -i testsrc2=size=640x360:rate=25 -t 1 -c:v libx265 -x265-params log-level=error -preset veryfast -crf 18 \
  -pix_fmt yuv444p "$D/h444.mp4"
# HEVC Main 10 SDR (P010, packed 16-bit planes).
"${F[@]}" -f lavfi -i testsrc2=size=1280x720:rate=25 -t 1 -c:v libx265 -x265-params log-level=error -preset veryfast -crf 18 \
  -pix_fmt yuv420p10le -colorspace bt709 -color_primaries bt709 -color_trc bt709 "$D/hevc10sdr.mp4"
# Rotated 8-bit (unpacked planes), and HLG 10-bit rotated (P010 into unpacked planes, tone mapping).
cp "$M/h264_aac51_1080p_bbb_rot90_2s.mp4" "$M/hevc10_hlg_aac_1080p_editlist_bframes_rot90.mp4" "$D/"
# MPEG-TS that changes size mid-stream: 1 s of 640x360, then 1 s of 320x240.
"${F[@]}" -f lavfi -i testsrc2=size=640x360:rate=25 -t 1 -c:v libx264 -preset veryfast -crf 18 -pix_fmt yuv420p -f mpegts "$D/a.part"
"${F[@]}" -f lavfi -i testsrc2=size=320x240:rate=25 -t 1 -c:v libx264 -preset veryfast -crf 18 -pix_fmt yuv420p -output_ts_offset 1 -f mpegts "$D/b.part"
cat "$D/a.part" "$D/b.part" > "$D/sizes.ts" && rm "$D/a.part" "$D/b.part"
