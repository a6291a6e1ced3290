#!/usr/bin/env bash
# On the GPU machine (bundle in .gpu, clips in .gpu/files): the scaled outputs of issue 14 on NVIDIA's GL,
# both transfers, for comparison with llvmpipe's and ffmpeg's on the development machine, and timings of a
# 1080p clip scaled and not (x264 veryfast), interleaved. Writes under $OUT. Pack (clips made here):
#   ffmpeg -f lavfi -i testsrc2=size=640x360:rate=25 -t 0.2 -pix_fmt yuv420p -color_primaries bt709 \
#     -color_trc bt709 -colorspace bt709 -color_range tv -c:v ffv1 /tmp/dev/tf.mkv   (cup.mkv likewise from
#     ../shared/media/h264_aac_480p_cup_8s.mp4, -frames:v 3; deer10.mp4: the 1080p deer clip, -stream_loop 9 -c copy)
#   ../shared/tools/gpu-bundle-slim .build/release/gpuencode /tmp/dev/tf.mkv /tmp/dev/cup.mkv /tmp/dev/deer10.mp4
# then compare the outputs here with ffmpeg's psnr filter against llvmpipe's and `scale=W:H:flags=lanczos`.
set -u
G="bash .gpu/run gpuencode"
F=.gpu/files
for t in pbo client; do
  GPUENCODE_TRANSFER=$t $G $F/tf.mkv $OUT/tf320-$t.mkv --size 320x180 --crf 0 --speed ultrafast -y -q
  GPUENCODE_TRANSFER=$t $G $F/tf.mkv $OUT/tf1280-$t.mkv --size 1280x720 --crf 0 --speed ultrafast -y -q
  GPUENCODE_TRANSFER=$t $G $F/cup.mkv $OUT/cupinv-$t.mkv --filter colorInvert --size 320x240 --crf 0 --speed ultrafast -y -q
done
for i in 1 2 3; do
  for args in "--preset none" "--preset identity" "--width 1280" "--preset sepia" "--preset sepia --width 1280"; do
    s=$(date +%s.%N); $G $F/deer10.mp4 /tmp/o.mp4 $args --speed veryfast -y -q; e=$(date +%s.%N)
    echo "round $i: $args: $(awk "BEGIN{print $e-$s}") s"
  done
done | tee $OUT/scale-times.txt
