#!/usr/bin/env bash
# NVDEC frames through CUDA-GL interop (issue 15), on the GPU machine: every path the frames can take
# against software decoding of the same file. It needs an NVIDIA GPU, so CI (llvmpipe) cannot run it;
# SemiPlanarSourceTests covers the GL half there. Make the bundles here and run it there:
#   swift build -c release --static-swift-stdlib
#   bash Tests/Device/nvdec-fixtures.sh /tmp/nvfx          (the clips, made with the ffmpeg CLI)
#   ../shared/tools/gpu-bundle-slim .build/release/gpuencode /tmp/nvfx/*
#   ../shared/tools/ff-bundle
#   (device) bash Tests/Device/nvdec-interop.sh           ($OUT: the device tool's output folder)
#
# The oracle: ffmpeg's framemd5 of each output's video. H.264 and HEVC decoding is bit-exact, so a
# lossless encode (x264 ultrafast, crf 0) of a frame decoded on NVDEC must equal the same encode
# of the frame libavcodec decoded in software; any byte the interop copy, the semi-planar pass or
# the download fallback got wrong shows. Each case also checks, from -v, which path the frames took.
# Then wall times: software decoding, NVDEC with interop, NVDEC with download (interleaved).
set -u
G=(bash .gpu/run gpuencode)
FF=(bash .ffb/run ffmpeg)
F=.gpu/files
OUT=${OUT:-/tmp}
RUNS=${RUNS:-3}
LOG="$OUT/nvdec-interop.txt"
W=$(mktemp -d)
fails=0
say() { echo "$*" | tee -a "$LOG"; }
md5s() { "${FF[@]}" -nostdin -v error -i "$1" -map 0:v -f framemd5 - | grep -v '^#' | cut -d, -f2-; }
LOSSLESS=(--x264-preset ultrafast --crf 0 -y)

# check NAME EXPECT INPUT EXT [ARGS...]: software, NVDEC with interop and NVDEC downloaded must give
# the same frames; EXPECT is what -v must say about the NVDEC frames (interop|fallback|bypass).
check() {
  local name=$1 expect=$2 input=$F/$3 ext=$4; shift 4
  local sw="$W/$name-sw.$ext" hw="$W/$name-hw.$ext" dl="$W/$name-dl.$ext"
  "${G[@]}" "$input" "$sw" "${LOSSLESS[@]}" "$@" 2>"$W/sw.err" || { say "FAIL $name: software run exited $? $(tail -1 "$W/sw.err")"; fails=$((fails+1)); return; }
  "${G[@]}" "$input" "$hw" "${LOSSLESS[@]}" --hwaccel cuda -v "$@" 2>"$W/hw.err" || { say "FAIL $name: NVDEC run exited $? $(tail -1 "$W/hw.err")"; fails=$((fails+1)); return; }
  GPUENCODE_CUDA_INTEROP=0 "${G[@]}" "$input" "$dl" "${LOSSLESS[@]}" --hwaccel cuda -v "$@" 2>"$W/dl.err" || { say "FAIL $name: download run exited $?"; fails=$((fails+1)); return; }
  local a b c n
  a=$(md5s "$sw"); b=$(md5s "$hw"); c=$(md5s "$dl"); n=$(printf '%s\n' "$a" | grep -c .)
  local path=none
  grep -q "through CUDA-GL interop" "$W/hw.err" && path=interop
  grep -q "downloaded to system memory: CUDA-GL interop is not available" "$W/hw.err" && path=fallback
  grep -q "NVDEC frames arrive in CUDA memory and are downloaded" "$W/hw.err" && path=bypass
  grep -q "NVDEC frames arrive in CUDA memory and are downloaded" "$W/dl.err" || path="$path, download run did not download"
  if [ "$n" -gt 0 ] && [ "$a" = "$b" ] && [ "$a" = "$c" ] && [ "$path" = "$expect" ]; then
    say "ok   $name: $n frames identical (software, NVDEC $path, NVDEC downloaded)"
  else
    say "FAIL $name: frames $n; interop $([ "$a" = "$b" ] && echo same || echo DIFFERENT); download $([ "$a" = "$c" ] && echo same || echo DIFFERENT); path '$path', expected '$expect'"
    grep -E "NVDEC|interop|error|decoder" "$W/hw.err" | head -5 | sed 's/^/     /' | tee -a "$LOG"
    fails=$((fails+1))
  fi
  rm -f "$sw" "$hw" "$dl"
}

say "# $(date -u +%FT%TZ) $(nproc) cores; $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)"
say "## correctness: NVDEC (interop, and downloaded) against software decoding, lossless x264"
check packed-pbo-pipelined       interop t1080.mp4 mp4 --preset sepia -t 2
check packed-sequential          interop t1080.mp4 mp4 --preset sepia -t 2 --deterministic
GPUENCODE_TRANSFER=client check packed-client-memory interop t1080.mp4 mp4 --preset sepia -t 2
check chain-matroska             interop t1080.mp4 mkv --preset heavyblur -t 2
check rotated-planes             interop h264_aac51_1080p_bbb_rot90_2s.mp4 mp4 --preset sepia
check odd-size                   interop odd.mp4 mp4 --preset sepia
check p010-packed                interop hevc10sdr.mp4 mp4 --preset sepia
check p010-rotated-hlg-tonemap   interop hevc10_hlg_aac_1080p_editlist_bframes_rot90.mp4 mp4 --preset sepia -t 1
check p010-hdr-keep              interop hevc10_hlg_aac_1080p_editlist_bframes_rot90.mp4 mkv --preset sepia -t 1 --hdr keep --codec h264
check deinterlace-field          interop i1080.mp4 mp4 --preset sepia --deinterlace field
check hevc444-downloads          fallback h444.mp4 mp4 --preset sepia
check no-gpu-stage               bypass t1080.mp4 mp4 --preset none -t 2

# A stream that changes size mid-way (MPEG-TS, 640x360 then 320x240): frames of another size than
# the first are converted by swscale as in software decoding (scaled to 640x360); frames must match
# the software run, identical or, where swscale's NV12 input rounds otherwise, above 45 dB.
say "## size change mid-stream"
"${G[@]}" "$F/sizes.ts" "$W/sz-sw.mp4" "${LOSSLESS[@]}" --preset sepia 2>>"$LOG"
"${G[@]}" "$F/sizes.ts" "$W/sz-hw.mp4" "${LOSSLESS[@]}" --preset sepia --hwaccel cuda 2>>"$LOG"
n=$(md5s "$W/sz-sw.mp4" | grep -c .)
# (framemd5 lists 49 of the 50 frames: the joint's repaired timestamp.)
if [ "$n" -ge 49 ] && [ "$(md5s "$W/sz-sw.mp4")" = "$(md5s "$W/sz-hw.mp4")" ]; then
  say "ok   size-change: $n frames identical"
else
  psnr=$("${FF[@]}" -nostdin -i "$W/sz-sw.mp4" -i "$W/sz-hw.mp4" -lavfi "[0:v]settb=1/25,setpts=N[a];[1:v]settb=1/25,setpts=N[b];[a][b]psnr" -f null - 2>&1 | grep -o 'average:[0-9.inf]*' | cut -d: -f2)
  hn=$(md5s "$W/sz-hw.mp4" | grep -c .)
  if [ "$n" -ge 49 ] && [ "$hn" -eq "$n" ] && awk -v p="$psnr" 'BEGIN { exit !(p == "inf" || p + 0 >= 45) }'; then
    say "ok   size-change: $n frames, PSNR $psnr dB against software"
  else
    say "FAIL size-change: frames $n / $hn, PSNR ${psnr:-none}"; fails=$((fails+1))
  fi
fi

say "## batch (shared GL context): NVDEC with interop against software decoding"
mkdir -p "$W/in" "$W/sw" "$W/hw"
for c in t1080.mp4 odd.mp4 h264_aac51_1080p_bbb_rot90_2s.mp4 hevc10sdr.mp4; do ln -s "$PWD/$F/$c" "$W/in/$c"; done
"${G[@]}" batch "$W/in" --out-dir "$W/sw" --preset sepia --x264-preset ultrafast --crf 0 --jobs 4 -q 2>>"$LOG"
"${G[@]}" batch "$W/in" --out-dir "$W/hw" --preset sepia --x264-preset ultrafast --crf 0 --jobs 4 --hwaccel cuda -q 2>>"$LOG"
for c in "$W"/sw/*.mp4; do
  n=$(basename "$c")
  if [ -s "$c" ] && [ "$(md5s "$c")" = "$(md5s "$W/hw/$n")" ]; then say "ok   batch $n identical"; else say "FAIL batch $n differs"; fails=$((fails+1)); fi
done

say "## wall seconds, x264 ultrafast crf 23, t1080.mp4 (10 s 1080p30), $RUNS interleaved rounds"
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
for r in $(seq "$RUNS"); do
  for p in sepia none; do
    for side in software interop download; do
      case $side in
        software) env=(); hw=(--hwaccel none) ;;
        interop) env=(); hw=(--hwaccel cuda) ;;
        download) env=(GPUENCODE_CUDA_INTEROP=0); hw=(--hwaccel cuda) ;;
      esac
      t0=$(date +%s.%N)
      line=$(env "${env[@]}" "${G[@]}" "$F/t1080.mp4" "$W/t.mp4" -y --preset "$p" "${hw[@]}" --x264-preset ultrafast --crf 23 -v 2>&1 | grep -E "stages busy|error" | tr '\n' ' ')
      t1=$(date +%s.%N)
      say "time preset $p $side run $r: $(secs "$t0" "$t1") s | $line"
    done
  done
done
rm -rf "$W"
say "failures: $fails"
[ "$fails" -eq 0 ]
