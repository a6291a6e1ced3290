#!/usr/bin/env bash
# GPU peers (issue 15), a benchmark, not a test: gpuencode against ffmpeg's own GPU filters, libplacebo
# (Vulkan, a sepia user shader) and program_opencl (a sepia kernel), with plain ffmpeg and ffmpeg's CPU
# sepia alongside, interleaved round by round (A B C D ... A B C D ...) in one run on the same clips.
#
# Pack here (repository root; the shader and kernel are written by the script, no clip needs to travel):
#   swift build -c release --static-swift-stdlib
#   ../shared/tools/gpu-bundle-slim .build/release/gpuencode
#   ../shared/tools/ff-bundle
# Run there with the device tool, from the repository root, carrying the bundles:
#   run  command: bash bench/gpu-peers.sh                       carry: [".gpu", ".ffb"]
#   (2160p as a second command if time is left: bash bench/gpu-peers.sh --clips 2160p --no-check)
# Results: Markdown on stdout and in $OUT/gpu-peers.md, every timed run in $OUT/gpu-peers.csv, the
# side logs' last lines in $OUT/gpu-peers.log. Here (llvmpipe, lavapipe, pocl if installed) it runs too:
#   bash bench/gpu-peers.sh --rounds 1 --seconds 1 --filter-frames 30 --check-frames 10
#
#   bench/gpu-peers.sh [--rounds N] [--clips 1080p[,2160p]] [--clip FILE] [--seconds S]
#                      [--filter-frames N] [--check-frames N] [--sides LIST] [--no-transcode]
#                      [--no-filters] [--no-check] [--budget SECONDS] [--side-timeout SECONDS]
#
# --rounds N       rounds of every part (default 5); each round runs every side once, in order
# --clips LIST     generated clips: 1080p (default), 2160p; testsrc2 30 fps + 440 Hz sine (AAC),
#                  x264 crf 18, tagged BT.709; --seconds S long (default 10; 2160p gets S/2)
# --clip FILE      benchmark FILE instead of generated clips
# --filter-frames  gpuencode --benchmark-filters N at 1080p (default 3000; scaled by pixel count)
# --check-frames   frames of the correctness clips (default 30)
# --sides LIST     a subset of the sides below, comma-separated (default: all)
# --budget S       stop starting rounds after S seconds (default 530: the device kills a command at 600)
#
# Sides. Whole transcode, x264 veryfast crf 23, yuv420p, audio copied on every side:
#   gpuencode-none, gpuencode-sepia       gpuencode --preset none | sepia
#   ffmpeg-plain                          ffmpeg, no filter (the floor every ffmpeg side pays)
#   ffmpeg-cpu-sepia                      -vf colorchannelmixer=<GPUImage's sepia matrix>
#   ffmpeg-libplacebo-sepia               hwupload (Vulkan), libplacebo with the user shader, hwdownload
#   ffmpeg-opencl-sepia                   rgba, hwupload (OpenCL), program_opencl, hwdownload, yuv420p
# Filter stage alone (no encoder): gpuencode --benchmark-filters N (--preset sepia and identity) against
# ffmpeg -benchmark ... -f null - (decode + upload + filter + download), plus ffmpeg's decode alone and
# its Vulkan / OpenCL round trip without a filter (their transfer floors). The two do not time the same span:
# see the report's notes. Correctness: every sepia peer's output against gpuencode's sepia, ffmpeg's psnr
# filter, lossless x264, on a smooth clip (gradients: judges matrix and range) and on the benchmark
# clip's first frames (testsrc2's hard colour edges add chroma-resampling differences).
#
# Tools: GPUENCODE / FFMPEG / FFPROBE (commands) override the defaults: `bash .gpu/run gpuencode`,
# `bash .ffb/run ffmpeg|ffprobe` where the bundles are here and ffmpeg is not on PATH (the GPU machine;
# BUNDLES=1 forces them, BUNDLES=0 never), else .build/release/gpuencode, ffmpeg, ffprobe.
# Timing: /usr/bin/time, else the bundle's (`bash .ffb/run time`). OpenCL: where
# /usr/local/nvidia/lib64/libnvidia-opencl.so.1 exists, OCL_ICD_VENDORS names a vendor file listing it alone
# (KEEP_OCL_ICD=1 keeps the environment's). Debian's ocl-icd gave no platform (-1001) with OCL_ICD_FILENAMES
# pointing there, although the library itself offers one (clIcdGetPlatformIDsKHR: 1 platform), 2026-11-23.
set -u

usage() { awk 'NR == 1 { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "$0"; }

ROUNDS=5
CLIPS_ARG=1080p
CLIP_FILE=
SECONDS_GEN=10
FILTER_FRAMES=3000
CHECK_FRAMES=30
SIDES_ARG=
DO_TRANSCODE=1
DO_FILTERS=1
DO_CHECK=1
BUDGET=530
SIDE_TIMEOUT=240
need() { if [ $# -lt 2 ] || [ -z "$2" ]; then echo "gpu-peers.sh: $1 needs a value" >&2; exit 64; fi; }
while [ $# -gt 0 ]; do
  case $1 in
    --rounds)        need "$@"; ROUNDS=$2; shift 2 ;;
    --clips)         need "$@"; CLIPS_ARG=$2; shift 2 ;;
    --clip)          need "$@"; CLIP_FILE=$2; shift 2 ;;
    --seconds)       need "$@"; SECONDS_GEN=$2; shift 2 ;;
    --filter-frames) need "$@"; FILTER_FRAMES=$2; shift 2 ;;
    --check-frames)  need "$@"; CHECK_FRAMES=$2; shift 2 ;;
    --sides)         need "$@"; SIDES_ARG=$2; shift 2 ;;
    --no-transcode)  DO_TRANSCODE=0; shift ;;
    --no-filters)    DO_FILTERS=0; shift ;;
    --no-check)      DO_CHECK=0; shift ;;
    --budget)        need "$@"; BUDGET=$2; shift 2 ;;
    --side-timeout)  need "$@"; SIDE_TIMEOUT=$2; shift 2 ;;
    -h|--help)       usage; exit 0 ;;
    *) echo "gpu-peers.sh: unknown argument: $1" >&2; usage >&2; exit 64 ;;
  esac
done
bad() { echo "gpu-peers.sh: $*" >&2; exit 64; }
posint() { case $1 in ''|*[!0-9]*) return 1 ;; *) [ "$1" -gt 0 ] ;; esac; }
for v in ROUNDS SECONDS_GEN FILTER_FRAMES CHECK_FRAMES BUDGET SIDE_TIMEOUT; do
  posint "${!v}" || bad "${v,,} must be a positive integer (got '${!v}')"
done
[ -z "$CLIP_FILE" ] || [ -r "$CLIP_FILE" ] || bad "--clip: cannot read $CLIP_FILE"

TRANSCODE_SIDES=(gpuencode-none gpuencode-sepia ffmpeg-plain ffmpeg-cpu-sepia ffmpeg-libplacebo-sepia ffmpeg-opencl-sepia)
FILTER_SIDES=(gpuencode-sepia gpuencode-identity ffmpeg-decode ffmpeg-cpu-sepia ffmpeg-vulkan-copy
  ffmpeg-libplacebo-sepia ffmpeg-opencl-copy ffmpeg-opencl-sepia)
CHECK_SIDES=(ffmpeg-cpu-sepia ffmpeg-libplacebo-sepia ffmpeg-opencl-sepia)
if [ -n "$SIDES_ARG" ]; then
  IFS=, read -r -a want <<<"$SIDES_ARG"
  for s in "${want[@]}"; do
    case " ${TRANSCODE_SIDES[*]} ${FILTER_SIDES[*]} " in *" $s "*) ;; *) bad "--sides: unknown side '$s'" ;; esac
  done
  pick() { local s out=(); for s in "$@"; do [[ ",$SIDES_ARG," == *",$s,"* ]] && out+=("$s"); done; echo "${out[*]}"; }
  read -r -a TRANSCODE_SIDES <<<"$(pick "${TRANSCODE_SIDES[@]}")"
  read -r -a FILTER_SIDES <<<"$(pick "${FILTER_SIDES[@]}")"
  read -r -a CHECK_SIDES <<<"$(pick "${CHECK_SIDES[@]}")"
fi

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 1
OUTDIR=${OUT:-}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/gpu-peers.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
LOGF=$WORK/run.log
CSV=$WORK/runs.csv
echo "part,clip,side,round,status,wall_s,user_s,sys_s,maxrss_kib,frames,fps,note" >"$CSV"
START=$(date +%s)
log() { echo "gpu-peers: $*" >&2; echo "$*" >>"$LOGF"; }
NOTES=()
note() { NOTES+=("$*"); log "note: $*"; }
elapsed() { echo $(( $(date +%s) - START )); }
over_budget() { [ "$(elapsed)" -ge "$BUDGET" ]; }

# ---- tools ------------------------------------------------------------------------------------------------
# The bundles are used where there is no ffmpeg on PATH (the GPU machine), or with BUNDLES=1: their run
# scripts unpack into /tmp and extract Debian's glvnd packages into / on first use, which is for there only.
USE_BUNDLES=${BUNDLES:-}
if [ -z "$USE_BUNDLES" ]; then
  USE_BUNDLES=0
  if [ -f .gpu/run ] && [ -f .ffb/run ] && ! command -v ffmpeg >/dev/null 2>&1; then USE_BUNDLES=1; fi
fi
if [ -n "${GPUENCODE:-}" ]; then read -r -a G <<<"$GPUENCODE"
elif [ "$USE_BUNDLES" = 1 ]; then G=(bash .gpu/run gpuencode)
else G=(.build/release/gpuencode); fi
if [ -n "${FFMPEG:-}" ]; then read -r -a FF <<<"$FFMPEG"
elif [ "$USE_BUNDLES" = 1 ]; then FF=(bash .ffb/run ffmpeg)
else FF=(ffmpeg); fi
if [ -n "${FFPROBE:-}" ]; then read -r -a FP <<<"$FFPROBE"
elif [ "$USE_BUNDLES" = 1 ]; then FP=(bash .ffb/run ffprobe)
else FP=(ffprobe); fi
if [ -x /usr/bin/time ]; then TIMER=(/usr/bin/time)
elif [ "$USE_BUNDLES" = 1 ]; then TIMER=(bash .ffb/run time)
else TIMER=(); note "no /usr/bin/time and no .ffb bundle: wall time from date, no CPU time or peak RSS"; fi
TO=()
command -v timeout >/dev/null 2>&1 && TO=(timeout -k 5 "$SIDE_TIMEOUT")
NV_OCL=/usr/local/nvidia/lib64/libnvidia-opencl.so.1
# The GPU machine's environment lists pocl first (libpocl.so.2:libnvidia-opencl.so.1), and ffmpeg's
# `opencl=ocl` takes the first platform's first device, which pocl could not create there: NVIDIA's alone.
if [ -e "$NV_OCL" ] && [ "${KEEP_OCL_ICD:-0}" != 1 ]; then
  TMPDIR_OCL=$(mktemp -d); echo "$NV_OCL" > "$TMPDIR_OCL/nvidia.icd"
  unset OCL_ICD_FILENAMES
  export OCL_ICD_VENDORS=$TMPDIR_OCL
fi

# The sepia peers: GPUImage's sepia matrix (Sources/GPUEncodeFilters/ColorMatrixFilters.swift, rows are
# output R, G, B), the same as bench/compare.sh's colorchannelmixer. Both shaders see non-linear R'G'B'
# in 0..1, as gpuencode's filters and colorchannelmixer do. (../shared/tools/peer-shaders has the
# classic .393/.769/.189 matrix instead: not the same picture, so not used here.)
SEPIA_CCM='colorchannelmixer=.3588:.7044:.1368:0:.2990:.5870:.1140:0:.2392:.4696:.0912'
HOOK=$WORK/sepia.hook
CLK=$WORK/sepia.cl
cat >"$HOOK" <<'EOF'
//!HOOK MAIN
//!BIND HOOKED
//!DESC gpuencode peer: GPUImage's sepia matrix
vec4 hook()
{
    // clamped first: libplacebo hands over R'G'B' in float, out of 0..1 where a YUV colour lies outside
    // the RGB gamut; every other side (gpuencode, swscale's rgba for colorchannelmixer and OpenCL) clips there
    vec4 c = clamp(HOOKED_texOff(0), 0.0, 1.0);
    vec3 s = vec3(dot(c.rgb, vec3(0.3588, 0.7044, 0.1368)),
                  dot(c.rgb, vec3(0.2990, 0.5870, 0.1140)),
                  dot(c.rgb, vec3(0.2392, 0.4696, 0.0912)));
    return vec4(clamp(s, 0.0, 1.0), c.a);
}
EOF
cat >"$CLK" <<'EOF'
// gpuencode peer for ffmpeg's program_opencl on RGBA frames (one plane): GPUImage's sepia matrix
__kernel void sepia(__write_only image2d_t dst, unsigned int index, __read_only image2d_t src)
{
    const sampler_t s = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST;
    int2 p = (int2)(get_global_id(0), get_global_id(1));
    float4 c = read_imagef(src, s, p);
    float4 o = (float4)(dot(c.xyz, (float3)(0.3588f, 0.7044f, 0.1368f)),
                        dot(c.xyz, (float3)(0.2990f, 0.5870f, 0.1140f)),
                        dot(c.xyz, (float3)(0.2392f, 0.4696f, 0.0912f)), c.w);
    write_imagef(dst, p, clamp(o, 0.0f, 1.0f));
}
EOF
VK_IN=(-init_hw_device vulkan=vk:0 -filter_hw_device vk)
CL_IN=(-init_hw_device opencl=ocl -filter_hw_device ocl)
VF_PLACEBO="format=yuv420p,hwupload,libplacebo=custom_shader_path=$HOOK:format=yuv420p,hwdownload,format=yuv420p"
VF_VKCOPY="format=yuv420p,hwupload,hwdownload,format=yuv420p"
VF_OPENCL="format=rgba,hwupload,program_opencl=source=$CLK:kernel=sepia,hwdownload,format=rgba,format=yuv420p"
VF_CLCOPY="format=rgba,hwupload,hwdownload,format=rgba,format=yuv420p"
X264=(-c:v libx264 -preset veryfast -crf 23 -pix_fmt yuv420p)
LOSSLESS=(-c:v libx264 -preset ultrafast -crf 0 -pix_fmt yuv420p)

# ---- running and timing -------------------------------------------------------------------------------------
# timed LOG CMD...: runs CMD (stdin closed) under the timer and the side timeout; sets RC WALL USR SYS KIB.
timed() {
  local lf=$1; shift
  local tf=$WORK/time.txt t0 t1
  rm -f "$tf"; WALL=; USR=; SYS=; KIB=
  t0=$(date +%s.%N)
  if [ ${#TIMER[@]} -gt 0 ]; then
    "${TO[@]}" "${TIMER[@]}" -f 'TIME %e %U %S %M' -o "$tf" "$@" </dev/null >"$lf" 2>&1; RC=$?
  else
    "${TO[@]}" "$@" </dev/null >"$lf" 2>&1; RC=$?
  fi
  t1=$(date +%s.%N)
  if [ -s "$tf" ] && grep -q '^TIME ' "$tf"; then
    read -r _ WALL USR SYS KIB < <(grep '^TIME ' "$tf" | tail -n 1)
  else
    WALL=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
  fi
  [ "$RC" -ne 124 ] || echo "killed after the side timeout of $SIDE_TIMEOUT s" >>"$lf"
  return "$RC"
}
why() {  # the last two telling lines of a failed side's log, on one line (ffmpeg's generic epilogue left out)
  grep -v -E '^\s*$|^Command exited with non-zero status|^TIME |^Conversion failed|Error while processing the decoded data|Failed to inject frame|Error while filtering|^Error parsing global options' \
    "$1" 2>/dev/null | tail -n 2 | sed 's/^\[[^]]*\] //' |
    paste -sd '|' - | sed 's/|/ \/ /' | tr -d '|' | cut -c1-240
}
keep_log() {  # keep_log TITLE LOG: the log's tail in the run log (comes back in $OUT/gpu-peers.log)
  { echo "--- $1"; tail -n 15 "$2"; } >>"$LOGF"
}
csv() { local IFS=,; echo "$*" >>"$CSV"; }
median() { tr -s ' ' '\n' <<<"$1" | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END {
  if (NR == 0) print ""; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
minmax() { tr -s ' ' '\n' <<<"$1" | grep -v '^$' | sort -g | awk 'NR == 1 { a = $1 } { b = $1 } END { if (NR) printf "%s-%s", a, b }'; }
calc() { awk "BEGIN { $1 }"; }
quote() { local o='' a; for a in "$@"; do case $a in ''|*[!A-Za-z0-9_./:=,+@%-]*) o+=" $(printf '%q' "$a")" ;; *) o+=" $a" ;; esac; done; printf '%s' "${o# }"; }

# ---- clips ------------------------------------------------------------------------------------------------------
declare -A CPATH CW CH CFR CDESC
CLIPS=()
probe_clip() {  # ID PATH
  local v n
  CPATH[$1]=$2
  v=$("${FP[@]}" -v error -select_streams v:0 -show_entries stream=width,height,nb_frames,avg_frame_rate -of csv=p=0 "$2" </dev/null | head -n 1)
  IFS=, read -r CW[$1] CH[$1] _ n <<<"$v"
  case $n in ''|*[!0-9]*) n=$("${FP[@]}" -v error -count_packets -select_streams v:0 -show_entries stream=nb_read_packets -of csv=p=0 "$2" </dev/null | head -n 1) ;; esac
  CFR[$1]=$n
  [ -n "${CW[$1]}" ] && [ -n "$n" ] || return 1
  CDESC[$1]="${CW[$1]}x${CH[$1]}, ${CFR[$1]} frames, $("${FP[@]}" -v error -show_entries format=duration -of csv=p=0 "$2" </dev/null | head -n 1 | cut -c1-5) s"
}
GEN_CMDS=()
make_clip() {  # ID W H SECONDS
  local f=$WORK/$1.mp4
  local cmd=(-hide_banner -v error -nostdin -y -f lavfi -i "testsrc2=size=${2}x${3}:rate=30"
    -f lavfi -i sine=frequency=440:sample_rate=48000 -t "$4" -c:v libx264 -preset veryfast -crf 18
    -pix_fmt yuv420p -colorspace bt709 -color_primaries bt709 -color_trc bt709 -c:a aac "$f")
  GEN_CMDS+=("ffmpeg $(quote "${cmd[@]}" | sed "s|$WORK/||")")
  log "making the $1 clip (${4} s)"
  if "${FF[@]}" "${cmd[@]}" </dev/null >"$WORK/gen.log" 2>&1 && probe_clip "$1" "$f"; then CLIPS+=("$1")
  else note "could not make the $1 clip: $(why "$WORK/gen.log")"; fi
}
if [ -n "$CLIP_FILE" ]; then
  if probe_clip clip "$CLIP_FILE"; then CLIPS+=(clip); else bad "--clip: ffprobe finds no video in $CLIP_FILE"; fi
else
  IFS=, read -r -a want <<<"$CLIPS_ARG"
  for c in "${want[@]}"; do
    case $c in
      1080p) make_clip 1080p 1920 1080 "$SECONDS_GEN" ;;
      2160p) make_clip 2160p 3840 2160 "$(calc "s = $SECONDS_GEN / 2; printf \"%g\", (s < 1 ? 1 : s)")" ;;
      *) bad "--clips: unknown clip '$c' (1080p, 2160p)" ;;
    esac
  done
fi
[ ${#CLIPS[@]} -gt 0 ] || { log "error: no clip to benchmark"; exit 66; }
label() { if [ "$1" = clip ]; then basename "${CPATH[clip]}"; else echo "$1"; fi; }

# ---- probes: which sides can run here (they also unpack the bundles before anything is timed) ---------------
declare -A AVAIL
GL_RENDERER="(not available)"; VK_DEV="(not available)"; CL_DEV="(not available)"
C0=${CPATH[${CLIPS[0]}]}
GE_VERSION=$("${G[@]}" --version </dev/null 2>&1 | head -n 1)
if pout=$("${G[@]}" "$C0" --benchmark-filters 5 --preset sepia </dev/null 2>&1) && grep -q '^filter stage:' <<<"$pout"; then
  AVAIL[gpuencode]=ok
  GL_RENDERER=$(sed -n 's/^filter stage: .*, preset [^,]*, //p' <<<"$pout" | head -n 1)
else
  AVAIL[gpuencode]="gpuencode does not run: $(tail -n 1 <<<"$pout" | cut -c1-200)"
fi
FF_VERSION=$("${FF[@]}" -hide_banner -version </dev/null 2>&1 | head -n 1)
AVAIL[ffmpeg]=ok
[[ $FF_VERSION == "ffmpeg version"* ]] || AVAIL[ffmpeg]="ffmpeg does not run: $FF_VERSION"
probe_ff() {  # KEY VF HWARGS...: a 2-frame run through the peer's filter chain at 64x64
  local key=$1 vf=$2; shift 2
  if "${FF[@]}" -hide_banner -v verbose -nostdin "$@" -f lavfi -i testsrc2=size=64x64:rate=30 -frames:v 2 -vf "$vf" -f null - \
       >"$WORK/probe-$key.log" 2>&1; then AVAIL[$key]=ok
  else AVAIL[$key]="$(why "$WORK/probe-$key.log")"; keep_log "probe $key" "$WORK/probe-$key.log"; fi
}
if [ "${AVAIL[ffmpeg]}" = ok ]; then
  probe_ff vulkan "$VF_VKCOPY" "${VK_IN[@]}"
  probe_ff libplacebo "$VF_PLACEBO" "${VK_IN[@]}"
  probe_ff opencl "$VF_CLCOPY" "${CL_IN[@]}"
  probe_ff program_opencl "$VF_OPENCL" "${CL_IN[@]}"
  VK_DEV=$(grep -m1 -o 'Device [0-9]* selected: .*' "$WORK/probe-vulkan.log" 2>/dev/null | sed 's/^Device [0-9]* selected: //')
  [ -n "$VK_DEV" ] || VK_DEV=$(sed -n 's/.*GPU listing:.*//p; s/.*[0-9]*: \(.*(discrete)\).*/\1/p' "$WORK/probe-vulkan.log" | head -n 1)
  [ -n "$VK_DEV" ] || VK_DEV="(${AVAIL[vulkan]})"
  # hwcontext_opencl lists "P.D: platform / device" at verbose level; the first one is the one used by default.
  CL_DEV=$(grep -m1 -o -E '\] [0-9]+\.[0-9]+: .*' "$WORK/probe-opencl.log" 2>/dev/null | sed 's/^\] //')
  [ -n "$CL_DEV" ] || CL_DEV="(${AVAIL[opencl]})"
else
  for k in vulkan libplacebo opencl program_opencl; do AVAIL[$k]=${AVAIL[ffmpeg]}; done
fi
for k in gpuencode ffmpeg vulkan libplacebo opencl program_opencl; do
  [ "${AVAIL[$k]}" = ok ] || note "$k unavailable here: ${AVAIL[$k]}"
done
need_of() {  # the probe a side needs
  case $1 in
    gpuencode-*) echo gpuencode ;;
    ffmpeg-libplacebo-*) echo libplacebo ;; ffmpeg-vulkan-*) echo vulkan ;;
    ffmpeg-opencl-sepia) echo program_opencl ;; ffmpeg-opencl-*) echo opencl ;;
    *) echo ffmpeg ;;
  esac
}

# ---- the sides' commands -------------------------------------------------------------------------------------------
# transcode_cmd SIDE CLIP OUT / filter_cmd SIDE CLIP FRAMES / check_cmd SIDE CLIP OUT: fill CMD.
ffvf() {  # ffvf SIDE: the -vf chain and the input options of an ffmpeg sepia side
  HW=(); VF=
  case $1 in
    ffmpeg-cpu-sepia) VF=$SEPIA_CCM ;;
    ffmpeg-libplacebo-sepia) HW=("${VK_IN[@]}"); VF=$VF_PLACEBO ;;
    ffmpeg-vulkan-copy) HW=("${VK_IN[@]}"); VF=$VF_VKCOPY ;;
    ffmpeg-opencl-sepia) HW=("${CL_IN[@]}"); VF=$VF_OPENCL ;;
    ffmpeg-opencl-copy) HW=("${CL_IN[@]}"); VF=$VF_CLCOPY ;;
  esac
}
transcode_cmd() {
  case $1 in
    gpuencode-*) CMD=("${G[@]}" "$2" "$3" --preset "${1#gpuencode-}" -y --speed veryfast --crf 23) ;;
    ffmpeg-plain) CMD=("${FF[@]}" -hide_banner -v error -nostdin -y -i "$2" "${X264[@]}" -c:a copy "$3") ;;
    *) ffvf "$1"; CMD=("${FF[@]}" -hide_banner -v error -nostdin -y "${HW[@]}" -i "$2" -vf "$VF" "${X264[@]}" -c:a copy "$3") ;;
  esac
}
filter_cmd() {
  case $1 in
    gpuencode-*) CMD=("${G[@]}" "$2" --benchmark-filters "$3" --preset "${1#gpuencode-}") ;;
    # -v info: -benchmark prints its "bench: ... rtime=" line at info level
    ffmpeg-decode) CMD=("${FF[@]}" -hide_banner -v info -nostats -nostdin -benchmark -i "$2" -an -f null -) ;;
    *) ffvf "$1"; CMD=("${FF[@]}" -hide_banner -v info -nostats -nostdin -benchmark "${HW[@]}" -i "$2" -an -vf "$VF" -f null -) ;;
  esac
}
check_cmd() {
  case $1 in
    gpuencode-*) CMD=("${G[@]}" "$2" "$3" --preset "${1#gpuencode-}" -y --speed ultrafast --crf 0 -an) ;;
    ffmpeg-plain) CMD=("${FF[@]}" -hide_banner -v error -nostdin -y -i "$2" -an "${LOSSLESS[@]}" "$3") ;;
    *) ffvf "$1"; CMD=("${FF[@]}" -hide_banner -v error -nostdin -y "${HW[@]}" -i "$2" -an -vf "$VF" "${LOSSLESS[@]}" "$3") ;;
  esac
}
show() {  # the command with bundle and work paths shortened
  local s; s=$(quote "${CMD[@]}")
  s=${s//"$WORK/"/}; s=${s//"bash .ffb/run ffmpeg"/ffmpeg}; s=${s//"bash .gpu/run gpuencode"/gpuencode}
  s=${s//.build\/release\/gpuencode/gpuencode}
  printf '%s' "$s"
}

# ---- correctness: sepia peers against gpuencode's sepia -----------------------------------------------------------
declare -A PSNR
CHECK_SRC=()
if [ "$DO_CHECK" -eq 1 ] && [ "${AVAIL[ffmpeg]}" = ok ]; then
  log "correctness: making the check clips ($CHECK_FRAMES frames)"
  # smooth: gradients through black, white, primaries and secondaries (no hard edges: judges the matrix and the range); edges: the benchmark clip's start.
  if "${FF[@]}" -hide_banner -v error -nostdin -y -f lavfi -i "gradients=size=1920x1080:rate=30:speed=0.02:seed=15:n=8:c0=black:c1=white:c2=red:c3=lime:c4=blue:c5=yellow:c6=cyan:c7=magenta" \
       -frames:v "$CHECK_FRAMES" -colorspace bt709 -color_primaries bt709 -color_trc bt709 "${LOSSLESS[@]}" \
       "$WORK/check-smooth.mp4" >"$WORK/gen.log" 2>&1; then CHECK_SRC+=(smooth)
  else note "could not make the gradients check clip: $(why "$WORK/gen.log")"; fi
  if "${FF[@]}" -hide_banner -v error -nostdin -y -i "$C0" -frames:v "$CHECK_FRAMES" -an "${LOSSLESS[@]}" \
       "$WORK/check-edges.mp4" >"$WORK/gen.log" 2>&1; then CHECK_SRC+=(edges)
  else note "could not cut the check clip from $(label "${CLIPS[0]}"): $(why "$WORK/gen.log")"; fi
  for src in "${CHECK_SRC[@]}"; do
    in=$WORK/check-$src.mp4
    for s in gpuencode-sepia gpuencode-none ffmpeg-plain "${CHECK_SIDES[@]}"; do
      k=$(need_of "$s")
      if [ "${AVAIL[$k]}" != ok ]; then PSNR[$src/$s]="skipped: ${AVAIL[$k]}"; continue; fi
      check_cmd "$s" "$in" "$WORK/c-$src-$s.mp4"
      if ! timed "$WORK/c.log" "${CMD[@]}" || [ ! -s "$WORK/c-$src-$s.mp4" ]; then
        PSNR[$src/$s]="failed: $(why "$WORK/c.log")"; keep_log "check $src $s" "$WORK/c.log"; log "check: $s failed on $src"
      fi
    done
    # peer (main) against gpuencode (reference); the plain ffmpeg decode against gpuencode --preset none
    # tells what the two agree on with no filter at all (their YUV in and out).
    for pair in "ffmpeg-plain gpuencode-none" $(for s in "${CHECK_SIDES[@]}"; do echo "$s:gpuencode-sepia"; done); do
      a=${pair%%[: ]*}; b=${pair##*[: ]}
      [ -z "${PSNR[$src/$a]:-}" ] || continue
      if [ -n "${PSNR[$src/$b]:-}" ]; then PSNR[$src/$a]="no reference (${b}: ${PSNR[$src/$b]})"; continue; fi
      line=$("${FF[@]}" -hide_banner -nostats -nostdin -i "$WORK/c-$src-$a.mp4" -i "$WORK/c-$src-$b.mp4" \
        -filter_complex "[0:v][1:v]psnr=shortest=1:stats_file=$WORK/psnr-$src-$a.txt" -f null - 2>&1 | grep -o 'PSNR y:.*' | tail -n 1)
      n=$(grep -c '^n:' "$WORK/psnr-$src-$a.txt" 2>/dev/null)
      if [ -n "$line" ]; then PSNR[$src/$a]="$line frames:$n"; log "check $src $a vs $b: $line ($n frames)"
      else PSNR[$src/$a]="failed: psnr gave no result"; fi
    done
  done
  rm -f "$WORK"/c-*.mp4
fi

# ---- whole transcode, interleaved ---------------------------------------------------------------------------------------
declare -A TW TRSS TSTATE
STOPPED=
if [ "$DO_TRANSCODE" -eq 1 ]; then
  for id in "${CLIPS[@]}"; do
    for s in "${TRANSCODE_SIDES[@]}"; do
      k=$(need_of "$s"); TW[$id/$s]=; TRSS[$id/$s]=0
      if [ "${AVAIL[$k]}" = ok ]; then TSTATE[$id/$s]=ok; else TSTATE[$id/$s]="skipped: ${AVAIL[$k]}"; fi
    done
    for ((r = 1; r <= ROUNDS; r++)); do
      if over_budget; then STOPPED="transcode on $(label "$id") stopped before round $r (budget ${BUDGET} s)"; note "$STOPPED"; break; fi
      for s in "${TRANSCODE_SIDES[@]}"; do
        [ "${TSTATE[$id/$s]}" = ok ] || continue
        o=$WORK/t-$s.mp4; rm -f "$o"
        transcode_cmd "$s" "${CPATH[$id]}" "$o"
        if timed "$WORK/t.log" "${CMD[@]}" && [ -s "$o" ]; then
          TW[$id/$s]+="$WALL "
          [ -n "$KIB" ] && [ "$KIB" -gt "${TRSS[$id/$s]}" ] && TRSS[$id/$s]=$KIB
          fps=$(calc "printf \"%.1f\", ${CFR[$id]} / ($WALL > 0 ? $WALL : 1)")
          csv transcode "$(label "$id")" "$s" "$r" ok "$WALL" "$USR" "$SYS" "$KIB" "${CFR[$id]}" "$fps" ""
          log "$(printf 'transcode %-6s round %d/%d  %-24s %7s s' "$(label "$id")" "$r" "$ROUNDS" "$s" "$WALL")"
        else
          w=$(why "$WORK/t.log"); TSTATE[$id/$s]="failed in round $r (exit $RC): $w"
          csv transcode "$(label "$id")" "$s" "$r" "failed:$RC" "$WALL" "$USR" "$SYS" "$KIB" "" "" "\"${w//\"/\'}\""
          keep_log "transcode $(label "$id") $s round $r" "$WORK/t.log"; log "error: $s failed on $(label "$id"): $w"
        fi
      done
    done
    rm -f "$WORK"/t-*.mp4
  done
fi

# ---- filter stage alone, interleaved ---------------------------------------------------------------------------------------
declare -A FFPS FSTATE FN
if [ "$DO_FILTERS" -eq 1 ]; then
  for id in "${CLIPS[@]}"; do
    # gpuencode's frame count: --filter-frames at 1080p, scaled by pixels (3000 at 1080p is 750 at 2160p).
    FN[$id]=$(calc "n = int($FILTER_FRAMES * 2073600 / (${CW[$id]} * ${CH[$id]})); print (n < 10 ? 10 : n)")
    for s in "${FILTER_SIDES[@]}"; do
      k=$(need_of "$s"); FFPS[$id/$s]=
      if [ "${AVAIL[$k]}" = ok ]; then FSTATE[$id/$s]=ok; else FSTATE[$id/$s]="skipped: ${AVAIL[$k]}"; fi
    done
    for ((r = 1; r <= ROUNDS; r++)); do
      if over_budget; then STOPPED="filter stage on $(label "$id") stopped before round $r (budget ${BUDGET} s)"; note "$STOPPED"; break; fi
      for s in "${FILTER_SIDES[@]}"; do
        [ "${FSTATE[$id/$s]}" = ok ] || continue
        filter_cmd "$s" "${CPATH[$id]}" "${FN[$id]}"
        fps=; n=
        if timed "$WORK/f.log" "${CMD[@]}"; then
          case $s in
            gpuencode-*)
              fps=$(sed -n 's/^filter stage: \([0-9.]*\) fps.*/\1/p' "$WORK/f.log" | head -n 1); n=${FN[$id]} ;;
            *)  # -benchmark's rtime: the transcode loop (demux, decode, filters, null muxer), not process start-up
              rt=$(sed -n 's/^bench: utime=.* rtime=\([0-9.]*\)s.*/\1/p' "$WORK/f.log" | tail -n 1)
              n=${CFR[$id]}
              [ -n "$rt" ] && fps=$(calc "printf \"%.1f\", $n / ($rt > 0 ? $rt : 1)") ;;
          esac
        fi
        if [ -n "$fps" ]; then
          FFPS[$id/$s]+="$fps "
          csv filters "$(label "$id")" "$s" "$r" ok "$WALL" "$USR" "$SYS" "$KIB" "$n" "$fps" ""
          log "$(printf 'filters   %-6s round %d/%d  %-24s %8s fps' "$(label "$id")" "$r" "$ROUNDS" "$s" "$fps")"
        else
          w=$(why "$WORK/f.log"); FSTATE[$id/$s]="failed in round $r (exit $RC): $w"
          csv filters "$(label "$id")" "$s" "$r" "failed:$RC" "$WALL" "$USR" "$SYS" "$KIB" "" "" "\"${w//\"/\'}\""
          keep_log "filters $(label "$id") $s round $r" "$WORK/f.log"; log "error: $s (filter stage) failed on $(label "$id"): $w"
        fi
      done
    done
  done
fi

# ---- the report -------------------------------------------------------------------------------------------------------------
cpu=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null)
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 1)
REPORT=$WORK/report.md
{
  echo "### GPU peers (bench/gpu-peers.sh), $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo
  echo "- machine: $(nproc) cores, ${cpu:-unknown CPU}${gpu:+, GPU: $gpu}"
  echo "- ${GE_VERSION:-gpuencode (version unknown)}; GL: $GL_RENDERER"
  echo "- ${FF_VERSION:-ffmpeg ?}; Vulkan: $VK_DEV; OpenCL: $CL_DEV"
  for id in "${CLIPS[@]}"; do echo "- clip $(label "$id"): ${CDESC[$id]}"; done
  echo "- tools: gpuencode = \`${G[*]}\`, ffmpeg = \`${FF[*]}\`$([ "$USE_BUNDLES" = 1 ] && echo ' (the bundles)')"
  echo "- $ROUNDS round(s), sides interleaved in each round; wall times from ${TIMER[*]:-date}; min-max over the rounds"
  if [ "$DO_TRANSCODE" -eq 1 ]; then
    echo
    echo "Whole transcode (decode, filter, x264 veryfast crf 23 yuv420p, audio copied, mux):"
    echo
    echo "| clip | side | median wall s | min-max s | / ffmpeg plain | / gpuencode none | fps | peak RSS MiB |"
    echo "|---|---|---:|---:|---:|---:|---:|---:|"
    for id in "${CLIPS[@]}"; do
      pm=$(median "${TW[$id/ffmpeg-plain]:-}"); nm=$(median "${TW[$id/gpuencode-none]:-}")
      for s in "${TRANSCODE_SIDES[@]}"; do
        m=$(median "${TW[$id/$s]}")
        if [ -z "$m" ]; then st=${TSTATE[$id/$s]}; [ "$st" != ok ] || st="not run (time budget)"; echo "| $(label "$id") | $s | $st | | | | | |"; continue; fi
        rp=; rn=
        [ -n "$pm" ] && rp=$(calc "printf \"%.2fx\", $m / $pm")
        [ -n "$nm" ] && rn=$(calc "printf \"%.2fx\", $m / $nm")
        st=; [ "${TSTATE[$id/$s]}" = ok ] || st=" (${TSTATE[$id/$s]})"
        echo "| $(label "$id") | $s$st | $(calc "printf \"%.2f\", $m") | $(minmax "${TW[$id/$s]}") | $rp | $rn | $(calc "printf \"%.1f\", ${CFR[$id]} / $m") | $(calc "printf \"%.0f\", ${TRSS[$id/$s]} / 1024") |"
      done
    done
  fi
  if [ "$DO_FILTERS" -eq 1 ]; then
    echo
    echo "Filter stage alone, no encoder. gpuencode: \`--benchmark-filters N\` holds a few decoded frames in memory"
    echo "and times N frames of upload, filters and YUV readback (no demux, no decode). ffmpeg: \`-benchmark ... -f null -\`,"
    echo "frames / rtime, where rtime spans the whole loop: demux, software H.264 decode, CPU format conversion"
    echo "(rgba for OpenCL, both ways), upload, filter, download. So the two spans differ by the decoder (and"
    echo "ffmpeg's CPU conversions); \"minus decode\" subtracts ffmpeg-decode's ms/frame, a rough estimate since"
    echo "ffmpeg decodes in frame threads alongside the filters. ffmpeg's rtime includes the filters' set-up"
    echo "(libplacebo's shader and OpenCL's kernel compile on the first frame); gpuencode's excludes its GL set-up and a warm-up."
    echo
    echo "| clip | side | frames | median fps | min-max fps | ms/frame | ms/frame minus decode |"
    echo "|---|---|---:|---:|---:|---:|---:|"
    for id in "${CLIPS[@]}"; do
      dm=$(median "${FFPS[$id/ffmpeg-decode]:-}")
      for s in "${FILTER_SIDES[@]}"; do
        m=$(median "${FFPS[$id/$s]}")
        if [ -z "$m" ]; then st=${FSTATE[$id/$s]}; [ "$st" != ok ] || st="not run (time budget)"; echo "| $(label "$id") | $s | | $st | | | |"; continue; fi
        n=${CFR[$id]}; [[ $s == gpuencode-* ]] && n=${FN[$id]}
        ms=$(calc "printf \"%.2f\", 1000 / $m")
        md=
        if [[ $s == ffmpeg-* ]] && [ "$s" != ffmpeg-decode ] && [ -n "$dm" ]; then md=$(calc "printf \"%.2f\", 1000 / $m - 1000 / $dm"); fi
        st=; [ "${FSTATE[$id/$s]}" = ok ] || st=" (${FSTATE[$id/$s]})"
        echo "| $(label "$id") | $s$st | $n | $(calc "printf \"%.1f\", $m") | $(minmax "${FFPS[$id/$s]}") | $ms | $md |"
      done
    done
  fi
  if [ "$DO_CHECK" -eq 1 ]; then
    echo
    echo "Correctness: each output against gpuencode's (\`psnr\`, peer as main, gpuencode as reference), lossless"
    echo "x264, $CHECK_FRAMES frames. smooth = lavfi gradients (no hard edges: a wrong matrix or range shows as a"
    echo "low figure here); edges = the benchmark clip's start (testsrc2's hard colour edges also show each"
    echo "side's chroma resampling). ffmpeg-plain is against gpuencode --preset none: no filter, the floor of agreement."
    echo
    echo "| source | side | PSNR Y dB | U | V | average | min frame | frames | verdict |"
    echo "|---|---|---:|---:|---:|---:|---:|---:|---|"
    for src in "${CHECK_SRC[@]}"; do
      for s in ffmpeg-plain "${CHECK_SIDES[@]}"; do
        p=${PSNR[$src/$s]:-}
        case $p in
          "PSNR y:"*)
            get() { sed -n "s/.*[ ]$1:\([0-9.inf]*\).*/\1/p" <<<" $p" | awk '{ if ($1 ~ /^[0-9.]+$/) printf "%.2f", $1; else printf "%s", $1 }'; }
            avg=$(get average)
            verdict=$(awk -v a="$avg" 'BEGIN { if (a == "inf" || a >= 45) print "agrees"; else if (a >= 35) print "close: resampling or gamut clipping?"; else if (a >= 28) print "differs: check"; else print "DISAGREES: wrong matrix or range?" }')
            echo "| $src | $s | $(get y) | $(get u) | $(get v) | $avg | $(get min) | $(sed -n 's/.* frames:\([0-9]*\).*/\1/p' <<<"$p") | $verdict |" ;;
          *) echo "| $src | $s | ${p:-not run} | | | | | | |" ;;
        esac
      done
    done
  fi
  echo
  echo "Commands (CLIP = the clip, OUT.mp4 a temporary file; sepia.hook and sepia.cl are written by the script):"
  echo
  echo '```'
  for c in "${GEN_CMDS[@]}"; do echo "# clip: $c"; done
  id=${CLIPS[0]}
  for s in "${TRANSCODE_SIDES[@]}"; do transcode_cmd "$s" CLIP OUT.mp4; echo "# transcode $s: $(show)"; done
  for s in "${FILTER_SIDES[@]}"; do filter_cmd "$s" CLIP "${FN[$id]:-N}"; echo "# filters $s: $(show)"; done
  for s in gpuencode-sepia "${CHECK_SIDES[@]}"; do check_cmd "$s" CHECK.mp4 OUT.mp4; echo "# check $s: $(show)"; done
  echo "# psnr: ffmpeg -i PEER.mp4 -i GPUENCODE.mp4 -filter_complex '[0:v][1:v]psnr=shortest=1' -f null -"
  echo "# env: OCL_ICD_VENDORS=${OCL_ICD_VENDORS:-unset} OCL_ICD_FILENAMES=${OCL_ICD_FILENAMES:-unset} VK_DRIVER_FILES=${VK_DRIVER_FILES:-unset} (.ffb/run sets the NVIDIA ICD)"
  echo '```'
  echo
  echo '`sepia.hook` (libplacebo, hooked at MAIN: R'"'"'G'"'"'B'"'"' 0..1 after the YUV conversion):'
  echo
  echo '```glsl'; cat "$HOOK"; echo '```'
  echo
  echo '`sepia.cl` (program_opencl, one RGBA plane):'
  echo
  echo '```c'; cat "$CLK"; echo '```'
  if [ ${#NOTES[@]} -gt 0 ]; then echo; for n in "${NOTES[@]}"; do echo "- note: $n"; done; fi
  echo
  echo "Total time: $(elapsed) s."
} >"$REPORT"

cat "$REPORT"
if [ -n "$OUTDIR" ]; then
  mkdir -p "$OUTDIR"
  cp "$REPORT" "$OUTDIR/gpu-peers.md"; cp "$CSV" "$OUTDIR/gpu-peers.csv"; cp "$LOGF" "$OUTDIR/gpu-peers.log"
  log "wrote $OUTDIR/gpu-peers.md, gpu-peers.csv, gpu-peers.log"
fi
exit 0
