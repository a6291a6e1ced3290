#!/usr/bin/env bash
# Benchmark (not a test): gpuencode against ffmpeg (and GStreamer's GL elements) on the same clips.
#
#   bench/compare.sh [--runs N] [--clips 1080p,2160p,real] [--sides LIST] [--real FILE]
#                    [--seconds N] [--filter-frames N] [--x264-preset P] [--crf N]
#                    [--bin PATH] [--no-install] [--out FILE.md]
#   bench/compare.sh --memory [--memory-seconds N] [--seconds N] [--x264-preset P] [--crf N]
#                    [--bin PATH] [--out FILE.md]
#
# Clips (--clips, default 1080p,2160p,real), cached in bench/.cache:
#   1080p, 2160p  testsrc2 30 fps, 10 s (--seconds N), 48 kHz sine in AAC, tagged BT.709
#   real          ../shared/media/h264_aac_360p_rooftop_17s.mp4 (--real FILE; skipped if missing)
# Sides (--sides, default all ten; gpuencode-identity can be added), same x264 settings
# (default --x264-preset veryfast --crf 23), audio copied:
#   plain            ffmpeg, no filter (every ratio is relative to this side on the same clip)
#   none             gpuencode --preset none (decode -> encode, no GPU stage: the floor)
#   ffmpeg-sepia     ffmpeg -vf colorchannelmixer=<GPUImage's sepia matrix>
#   gpuencode-sepia  gpuencode --preset sepia
#   gstreamer-sepia  gst-launch-1.0 ... glupload ! glcolorconvert ! gleffects effect=sepia
#                    ! glcolorconvert ! gldownload ... x264enc (colour conversion on the GL side)
#   gstreamer-sepia-cpuconv  the same with videoconvert (CPU) to and from RGBA around the GL part
#   ffmpeg-1977      ffmpeg's closest filtergraph to the 1977 look (eq, hue, screen blend, curves)
#   gpuencode-1977   gpuencode --preset 1977
#   ffmpeg-blur8     ffmpeg -vf gblur=sigma=8
#   gpuencode-blur8  gpuencode --preset heavyblur (gaussianBlur sigma 8)
# Runs are interleaved per clip (A B C ... A B C ...) and timed with /usr/bin/time; the report
# gives median wall time, ratio to plain, fps and peak RSS. A second table times the filter
# stage alone (gpuencode --benchmark-filters N, sepia direct/rgba and identity; 0 skips it).
# --memory instead runs gpuencode --preset sepia on a 640x360 clip of 10 minutes
# (--memory-seconds) and of 10 s (--seconds) and compares their peak RSS (target: within 10%).
# --no-install: do not apt-get install missing GStreamer packages. --clip FILE = --real FILE --clips real.
# The Markdown report goes to stdout; --out FILE appends it to FILE.
set -euo pipefail

usage() {  # the comment block above
  awk 'NR == 1 { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "$0"
}

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

RUNS=3
CLIPS_ARG=1080p,2160p,real
SIDES_ARG=plain,none,ffmpeg-sepia,gpuencode-sepia,gstreamer-sepia,gstreamer-sepia-cpuconv,ffmpeg-1977,gpuencode-1977,ffmpeg-blur8,gpuencode-blur8
REAL=h264_aac_360p_rooftop_17s.mp4
SECONDS_GEN=10
FILTER_FRAMES=300
X264_PRESET=veryfast
CRF=23
BIN=.build/release/gpuencode
INSTALL=1
MEMORY=0
MEMORY_SECONDS=600
OUT_MD=

need_arg() { if [ $# -lt 2 ] || [ -z "$2" ]; then echo "compare.sh: $1 needs a value" >&2; exit 64; fi; }
while [ $# -gt 0 ]; do
  case $1 in
    --runs)           need_arg "$@"; RUNS=$2; shift 2 ;;
    --clips)          need_arg "$@"; CLIPS_ARG=$2; shift 2 ;;
    --sides)          need_arg "$@"; SIDES_ARG=$2; shift 2 ;;
    --real)           need_arg "$@"; REAL=$2; shift 2 ;;
    --clip)           need_arg "$@"; REAL=$2; CLIPS_ARG=real; shift 2 ;;
    --seconds)        need_arg "$@"; SECONDS_GEN=$2; shift 2 ;;
    --filter-frames)  need_arg "$@"; FILTER_FRAMES=$2; shift 2 ;;
    --x264-preset)    need_arg "$@"; X264_PRESET=$2; shift 2 ;;
    --crf)            need_arg "$@"; CRF=$2; shift 2 ;;
    --bin)            need_arg "$@"; BIN=$2; shift 2 ;;
    --no-install)     INSTALL=0; shift ;;
    --memory)         MEMORY=1; shift ;;
    --memory-seconds) need_arg "$@"; MEMORY_SECONDS=$2; shift 2 ;;
    --out)            need_arg "$@"; OUT_MD=$2; shift 2 ;;
    -h|--help)        usage; exit 0 ;;
    *) echo "compare.sh: unknown argument: $1" >&2; usage >&2; exit 64 ;;
  esac
done

bad() { echo "compare.sh: $*" >&2; exit 64; }
is_posint() { case $1 in ''|*[!0-9]*) return 1 ;; *) [ "$1" -gt 0 ] ;; esac; }
is_posint "$RUNS" || bad "--runs must be a positive integer"
is_posint "$SECONDS_GEN" || bad "--seconds must be a positive integer"
is_posint "$MEMORY_SECONDS" || bad "--memory-seconds must be a positive integer"
case $FILTER_FRAMES in ''|*[!0-9]*) bad "--filter-frames must be a non-negative integer" ;; esac
case $CRF in ''|*[!0-9.]*) bad "--crf must be a number" ;; esac
case $X264_PRESET in
  ultrafast|superfast|veryfast|faster|fast|medium|slow|slower|veryslow|placebo) ;;
  *) bad "--x264-preset: unknown x264 preset: $X264_PRESET" ;;
esac

IFS=, read -r -a CLIPS <<<"$CLIPS_ARG"
for c in "${CLIPS[@]}"; do
  case $c in 1080p|2160p|real) ;; *) bad "--clips: unknown clip '$c' (1080p, 2160p, real)" ;; esac
done
ALL_SIDES=(plain none ffmpeg-sepia gpuencode-sepia gstreamer-sepia gstreamer-sepia-cpuconv gpuencode-identity
  ffmpeg-1977 gpuencode-1977 ffmpeg-blur8 gpuencode-blur8)
IFS=, read -r -a SIDES <<<"$SIDES_ARG"
for s in "${SIDES[@]}"; do
  case " ${ALL_SIDES[*]} " in *" $s "*) ;; *) bad "--sides: unknown side '$s' (${ALL_SIDES[*]})" ;; esac
done

log() { echo "compare.sh: $*" >&2; }
NOTES=()
note() { NOTES+=("$*"); log "note: $*"; }

for tool in ffmpeg ffprobe awk; do
  command -v "$tool" >/dev/null 2>&1 || { log "error: $tool not found (bash .ci/install-deps)"; exit 1; }
done
[ -x /usr/bin/time ] || { log "error: /usr/bin/time not found (apt-get install time)"; exit 1; }

CACHE=$ROOT/bench/.cache
mkdir -p "$CACHE"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/gpuencode-bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

quote() {  # shell-quotes each argument that needs it (GStreamer's ! and caps' commas do not)
  local out='' a
  for a in "$@"; do
    case $a in ''|*[!A-Za-z0-9_./:=,+@%^!-]*) out+=" $(printf '%q' "$a")" ;; *) out+=" $a" ;; esac
  done
  printf '%s' "${out# }"
}
median() {  # median of the space-separated numbers in $1
  tr -s ' ' '\n' <<<"$1" | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END {
    if (NR == 0) { print "" } else if (NR % 2) { print v[(NR + 1) / 2] } else { printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 } }'
}
fmt() { awk -v x="$1" -v f="$2" 'BEGIN { printf f, x }'; }

# ---- clips ----------------------------------------------------------------------------------------
# gen_clip WIDTH HEIGHT SECONDS NAME: generates testsrc2 + sine once into the cache; sets CLIP_PATH, GEN_LINE.
gen_clip() {
  local w=$1 h=$2 secs=$3 name=$4
  local cmd=(ffmpeg -hide_banner -v error -nostdin -y
    -f lavfi -i "testsrc2=size=${w}x${h}:rate=30"
    -f lavfi -i sine=frequency=440:sample_rate=48000
    -t "$secs" -c:v libx264 -preset veryfast -crf 18 -pix_fmt yuv420p
    -colorspace bt709 -color_primaries bt709 -color_trc bt709 -c:a aac)
  CLIP_PATH=$CACHE/$name
  GEN_LINE="$(quote "${cmd[@]}") $name"
  if [ ! -s "$CLIP_PATH" ]; then
    log "generating bench/.cache/$name (once)"
    "${cmd[@]}" "$CACHE/.gen.tmp.mp4"
    mv "$CACHE/.gen.tmp.mp4" "$CLIP_PATH"
  fi
}

# probe_clip ID: fills the C* maps (codecs, size, rate, frames, duration) for the clip at CPATH[ID].
declare -A CPATH CSRC CW CH CFPS CRATE CFRAMES CDUR CVCODEC CACODEC CFORMAT
probe_clip() {
  local id=$1 p=${CPATH[$1]} v a f vc w h r n
  v=$(ffprobe -v error -select_streams v:0 -show_entries stream=codec_name,width,height,avg_frame_rate,nb_frames -of csv=p=0 "$p" | head -n 1)
  a=$(ffprobe -v error -select_streams a:0 -show_entries stream=codec_name -of csv=p=0 "$p" | head -n 1)
  f=$(ffprobe -v error -show_entries format=format_name,duration -of csv=p=0 "$p" | head -n 1)
  IFS=, read -r vc w h r n <<<"$v"
  CVCODEC[$id]=$vc; CW[$id]=$w; CH[$id]=$h; CFPS[$id]=$r; CRATE[$id]=$r; CFRAMES[$id]=$n
  CACODEC[$id]=${a:-none}
  CFORMAT[$id]=${f%,*}
  CDUR[$id]=$(fmt "${f##*,}" '%.1f')
  CFPS[$id]=$(awk -v r="${CFPS[$id]}" 'BEGIN { n = split(r, x, "/"); printf "%.3g", (n == 2 && x[2] > 0) ? x[1] / x[2] : r }')
  case ${CFRAMES[$id]} in ''|*[!0-9]*)
    CFRAMES[$id]=$(ffprobe -v error -count_packets -select_streams v:0 -show_entries stream=nb_read_packets -of csv=p=0 "$p" | head -n 1) ;;
  esac
}
clip_desc() { local id=$1; echo "${CW[$id]}x${CH[$id]}, ${CFPS[$id]} fps, ${CFRAMES[$id]} frames, ${CDUR[$id]} s, ${CVCODEC[$id]}/${CACODEC[$id]}"; }

ACTIVE=()
add_generated() {  # ID W H SECONDS NAME
  gen_clip "$2" "$3" "$4" "$5"
  CPATH[$1]=$CLIP_PATH; CSRC[$1]="generated: $GEN_LINE"; ACTIVE+=("$1"); probe_clip "$1"
}
if [ "$MEMORY" -eq 1 ]; then
  add_generated short 640 360 "$SECONDS_GEN" "testsrc2_360p30_${SECONDS_GEN}s.mp4"
  add_generated long 640 360 "$MEMORY_SECONDS" "testsrc2_360p30_${MEMORY_SECONDS}s.mp4"
else
  for c in "${CLIPS[@]}"; do
    case $c in
      1080p) add_generated 1080p 1920 1080 "$SECONDS_GEN" "testsrc2_1080p30_${SECONDS_GEN}s.mp4" ;;
      2160p) add_generated 2160p 3840 2160 "$SECONDS_GEN" "testsrc2_2160p30_${SECONDS_GEN}s.mp4" ;;
      real)
        rp=$REAL
        [[ $rp == */* ]] || rp=$ROOT/../shared/media/$rp
        if [ -r "$rp" ] && [ -s "$rp" ] &&
           ffprobe -v error -select_streams v:0 -show_entries stream=codec_name -of csv=p=0 "$rp" 2>/dev/null | grep -q .; then
          CPATH[real]=$(cd "$(dirname "$rp")" && pwd)/$(basename "$rp")
          shown=${CPATH[real]}
          [[ $shown == "$(dirname "$ROOT")"/* ]] && shown=../${shown#"$(dirname "$ROOT")/"}
          CSRC[real]="file: $shown"; ACTIVE+=(real); probe_clip real
        else
          note "real clip not found or without video ($rp): skipped"
        fi ;;
    esac
  done
fi
[ ${#ACTIVE[@]} -gt 0 ] || { log "error: no clip to benchmark"; exit 66; }
clip_label() {
  case $1 in
    real) basename "${CPATH[real]}" ;;
    short|long) echo "360p ${CDUR[$1]%.0} s" ;;
    *) echo "$1" ;;
  esac
}

# ---- the gpuencode binary (never built here: build it with swift build -c release) -----------
GPU_OK=1
GL_RENDERER="(not available)"
GPU_VERSION=
if [ ! -x "$BIN" ]; then
  note "$BIN not found or not executable (build it with swift build -c release): gpuencode sides skipped"
  GPU_OK=0
else
  BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
  GPU_VERSION=$("$BIN" --version 2>/dev/null || true)
  if probe=$("$BIN" "${CPATH[${ACTIVE[0]}]}" --benchmark-filters 1 --preset sepia </dev/null 2>&1); then
    GL_RENDERER=$(printf '%s\n' "$probe" | sed -n 's/^filter stage: .*, preset [^,]*, //p' | head -n 1)
    [ -n "$GL_RENDERER" ] || GL_RENDERER="(unknown: $(printf '%s' "$probe" | head -n 1))"
  else
    note "gpuencode --benchmark-filters 1 failed: gpuencode sides skipped ($(printf '%s' "$probe" | tail -n 1))"
    GPU_OK=0
  fi
fi

# ---- GStreamer (only when its side is asked for) -------------------------------------------------
GST_OK=0
GST_ENV=()
GST_INFO="(not used)"
GST_PKGS=(gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-good gstreamer1.0-plugins-bad
  gstreamer1.0-plugins-ugly gstreamer1.0-gl gstreamer1.0-libav)
GST_ELEMENTS=(filesrc qtdemux h264parse avdec_h264 videoconvert glupload glcolorconvert gleffects gldownload x264enc mp4mux aacparse)
gst_missing() {
  if ! command -v gst-launch-1.0 >/dev/null 2>&1 || ! command -v gst-inspect-1.0 >/dev/null 2>&1; then
    echo gst-launch-1.0; return
  fi
  local e; for e in "${GST_ELEMENTS[@]}"; do gst-inspect-1.0 --exists "$e" 2>/dev/null || echo "$e"; done
}
gst_install() {
  local missing=() p sudo=()
  for p in "${GST_PKGS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -gt 0 ] || return 1
  command -v apt-get >/dev/null 2>&1 || { log "no apt-get: cannot install ${missing[*]}"; return 1; }
  if [ "$(id -u)" -ne 0 ]; then
    sudo -n true 2>/dev/null || { log "not root and no passwordless sudo: cannot install ${missing[*]}"; return 1; }
    sudo=(sudo -n)
  fi
  log "installing ${missing[*]} (apt-get; --no-install to skip)"
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >"$WORK/apt.log" 2>&1 ||
    { "${sudo[@]}" apt-get update -q >>"$WORK/apt.log" 2>&1 &&
      "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >>"$WORK/apt.log" 2>&1; } ||
    { log "apt-get install failed:"; tail -n 5 "$WORK/apt.log" | sed 's/^/    /' >&2; return 1; }
}
gst_probe() {  # gst_probe [VAR=VALUE...]: a tiny GL sepia pipeline; prints the GL renderer on success
  local out
  out=$(env "$@" GST_DEBUG=glcontext:4 GST_DEBUG_NO_COLOR=1 timeout 60 gst-launch-1.0 -q \
    videotestsrc num-buffers=3 ! video/x-raw,width=64,height=64 ! glupload ! glcolorconvert \
    ! gleffects effect=sepia ! glcolorconvert ! gldownload ! video/x-raw,format=I420 ! fakesink 2>&1) || return 1
  printf '%s\n' "$out" | sed -n 's/.*GL_RENDERER: //p' | head -n 1
}
if [[ " ${SIDES[*]} " == *" gstreamer-sepia"* ]] && [ "$MEMORY" -eq 0 ]; then
  gst_absent=$(gst_missing | paste -sd ' ' -)
  if [ -n "$gst_absent" ] && [ "$INSTALL" -eq 1 ]; then
    gst_install || true
    gst_absent=$(gst_missing | paste -sd ' ' -)
  fi
  if [ -n "$gst_absent" ]; then
    note "gstreamer sides skipped: missing $gst_absent (apt-get install ${GST_PKGS[*]})"
  else
    for envs in "GST_GL_PLATFORM=egl GST_GL_WINDOW=egl-device" "GST_GL_PLATFORM=egl GST_GL_WINDOW=surfaceless" \
                "GST_GL_PLATFORM=egl" ""; do
      read -r -a try_env <<<"$envs"
      if renderer=$(gst_probe "${try_env[@]}"); then
        GST_OK=1; GST_ENV=("${try_env[@]}")
        GST_INFO="$(gst-launch-1.0 --version | sed -n 's/^gst-launch-1.0 version //p' | head -n 1), GL: ${renderer:-unknown renderer}, env: ${envs:-(none)}"
        break
      fi
      log "GStreamer GL probe failed with env '${envs:-(none)}'"
    done
    [ "$GST_OK" -eq 1 ] || note "gstreamer sides skipped: no GStreamer GL context could be created (tried egl-device, surfaceless, egl, defaults)"
  fi
fi

# ---- the sides --------------------------------------------------------------------------------------
SEPIA='colorchannelmixer=.3588:.7044:.1368:0:.2990:.5870:.1140:0:.2392:.4696:.0912'
# -pix_fmt yuv420p: gpuencode writes yuv420p; without it the colorchannelmixer (RGB) side would let
# libx264 pick yuv444p (High 4:4:4), which is more work and not the same output.
X264=(-c:v libx264 -preset "$X264_PRESET" -crf "$CRF" -pix_fmt yuv420p)
# x264enc: pass=qual is x264's CRF mode with quantizer as the CRF (integers only); it also sets a VBV
# cap from "bitrate" (kbit/s), raised here to the maximum so that it never binds. key-int-max=250 is
# x264's (and ffmpeg's) default; x264enc's own default is 10 s of frames.
GST_CRF_OK=1
case $CRF in *.*) [[ $CRF =~ ^[0-9]+\.0*$ ]] || GST_CRF_OK=0 ;; esac
GST_Q=${CRF%%.*}
if ! [[ $GST_Q =~ ^[0-9]+$ ]] || [ "$GST_Q" -gt 50 ]; then GST_CRF_OK=0; fi
GST_X264=(x264enc speed-preset="$X264_PRESET" pass=qual quantizer="$GST_Q" bitrate=2048000 key-int-max=250)

# side_cmd SIDE CLIP_ID OUT: fills CMD; returns 1 (with SKIP_WHY) when the side cannot run on this clip.
side_cmd() {
  local side=$1 clip=${CPATH[$2]} out=$3
  SKIP_WHY=
  case $side in
    plain)              CMD=(ffmpeg -nostdin -v error -y -i "$clip" "${X264[@]}" -c:a copy "$out") ;;
    ffmpeg-sepia)       CMD=(ffmpeg -nostdin -v error -y -i "$clip" -vf "$SEPIA" "${X264[@]}" -c:a copy "$out") ;;
    ffmpeg-1977)
      # The 1977 recipe with ffmpeg's CPU filters: eq and hue on Y'CbCr, then the screen blend with a
      # flat pink at 10% and the tone curve in RGB (blend and curves are what ffmpeg has for them).
      local g="[0:v]eq=contrast=1.05:brightness=0.1:saturation=1.3,hue=h=17.19,format=gbrp[a];"
      g+="color=c=0xF36ABC:size=${CW[$2]}x${CH[$2]}:rate=${CRATE[$2]},format=gbrp[b];"
      g+="[a][b]blend=all_mode=screen:all_opacity=0.1:shortest=1,curves=all='0/0 0.25/0.20 0.5/0.5 0.75/0.80 1/1'[v]"
      CMD=(ffmpeg -nostdin -v error -y -i "$clip" -filter_complex "$g" -map "[v]" -map "0:a?" "${X264[@]}" -c:a copy "$out") ;;
    ffmpeg-blur8)       CMD=(ffmpeg -nostdin -v error -y -i "$clip" -vf gblur=sigma=8 "${X264[@]}" -c:a copy "$out") ;;
    none|gpuencode-sepia|gpuencode-identity|gpuencode-1977|gpuencode-blur8)
      local p=${side#gpuencode-}
      [ "$p" = blur8 ] && p=heavyblur
      CMD=("$BIN" "$clip" "$out" --preset "$p" -y --x264-preset "$X264_PRESET" --crf "$CRF")
      [ "$GPU_OK" -eq 1 ] || { SKIP_WHY="gpuencode not available"; return 1; } ;;
    gstreamer-sepia|gstreamer-sepia-cpuconv)
      # shellcheck disable=SC2054 # commas belong to GStreamer caps, not to the array
      local gl=(glupload ! glcolorconvert ! gleffects effect=sepia ! glcolorconvert ! gldownload)
      # shellcheck disable=SC2054
      [ "$side" = gstreamer-sepia ] || gl=(videoconvert ! video/x-raw,format=RGBA ! glupload ! gleffects effect=sepia
        ! gldownload ! video/x-raw,format=RGBA ! videoconvert)
      # shellcheck disable=SC2054
      CMD=(env "${GST_ENV[@]}" gst-launch-1.0 -q filesrc location="$clip" ! qtdemux name=d
        d.video_0 ! queue ! h264parse ! avdec_h264 ! "${gl[@]}" ! video/x-raw,format=I420
        ! "${GST_X264[@]}" ! h264parse ! mp4mux name=m ! filesink location="$out")
      case ${CACODEC[$2]} in
        aac)  CMD+=(d.audio_0 ! queue ! aacparse ! m.) ;;
        none) ;;
        *)    SKIP_WHY="pipeline handles AAC audio only (clip has ${CACODEC[$2]})" ;;
      esac
      [ "${CVCODEC[$2]}" = h264 ] || SKIP_WHY="pipeline handles H.264 video only (clip has ${CVCODEC[$2]})"
      [[ ${CFORMAT[$2]} == *mp4* ]] || SKIP_WHY="pipeline reads MP4/MOV only (clip is ${CFORMAT[$2]})"
      [ "$GST_CRF_OK" -eq 1 ] || SKIP_WHY="x264enc quantizer takes an integer 0..50 (--crf $CRF)"
      [ "$GST_OK" -eq 1 ] || SKIP_WHY="GStreamer GL not available"
      [ -z "$SKIP_WHY" ] || return 1 ;;
  esac
}
# The command as shown in the report: clip, output and binary paths replaced by names.
show_cmd() {  # show_cmd CLIP_ID OUT
  local line
  line=$(quote "${CMD[@]}")
  line=${line//$(quote "${CPATH[$1]}")/CLIP}
  line=${line//$(quote "$2")/OUT.mp4}
  line=${line//$(quote "$BIN")/gpuencode}
  printf '%s' "$line"
}

# time_cmd LOG: runs CMD under /usr/bin/time; sets WALL and KIB; returns CMD's status.
time_cmd() {
  local tf=$WORK/time.txt
  rm -f "$tf"
  if /usr/bin/time -f '%e %M' -o "$tf" "${CMD[@]}" </dev/null >"$1" 2>&1; then
    read -r WALL KIB < <(tail -n 1 "$tf")
  else
    return 1
  fi
}

# ---- report header ---------------------------------------------------------------------------------
cpu=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || true)
[ -n "$cpu" ] || cpu=$(lscpu 2>/dev/null | awk -F': *' '/^Model name/ { print $2; exit }' || true)
mem_gib=$(awk '/^MemTotal/ { printf "%.0f", $2 / 1048576 }' /proc/meminfo 2>/dev/null || true)
gpu_hw=
command -v nvidia-smi >/dev/null 2>&1 && gpu_hw=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | paste -sd ',' - || true)
REPORT=$WORK/report.md
header() {
  echo "### gpuencode benchmark ($1), $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo
  echo "- machine: $(nproc) cores, ${cpu:-unknown CPU}, ${mem_gib:-?} GiB RAM${gpu_hw:+, GPU: $gpu_hw} ($(uname -sr))"
  echo "- $(ffmpeg -hide_banner -version | head -n 1)"
  echo "- gpuencode ${GPU_VERSION:-(not available)}, GL renderer: $GL_RENDERER"
  [ "$MEMORY" -eq 1 ] || echo "- GStreamer: $GST_INFO"
  echo "- x264: preset $X264_PRESET, crf $CRF on every side; audio copied"
  for id in "${ACTIVE[@]}"; do echo "- clip $(clip_label "$id"): $(clip_desc "$id")"; done
}

# ---- memory mode -------------------------------------------------------------------------------------
if [ "$MEMORY" -eq 1 ]; then
  [ "$GPU_OK" -eq 1 ] || { log "error: --memory needs the gpuencode binary"; exit 1; }
  declare -A MWALL MKIB
  for id in short long; do
    side_cmd gpuencode-sepia "$id" "$WORK/$id.mp4"
    log "memory: gpuencode --preset sepia on $(clip_label "$id") ($(clip_desc "$id"))"
    if ! time_cmd "$WORK/$id.log"; then
      log "error: gpuencode failed on $(clip_label "$id"). Last lines of its output:"
      tail -n 8 "$WORK/$id.log" | sed 's/^/    /' >&2
      exit 1
    fi
    MWALL[$id]=$WALL; MKIB[$id]=$KIB
    log "memory: ${WALL} s, peak RSS $((KIB / 1024)) MiB"
  done
  ratio=$(awk -v a="${MKIB[long]}" -v b="${MKIB[short]}" 'BEGIN { printf "%.3f", a / b }')
  verdict=$(awk -v r="$ratio" 'BEGIN { print (r <= 1.10 ? "yes" : "no") }')
  {
    header memory
    echo
    echo "gpuencode --preset sepia, one run per clip; clips are 640x360 testsrc2 (not 1080p: a 10-minute"
    echo "clip at 1080p takes too long to make and encode on a small machine)."
    echo
    echo "| clip | duration s | frames | wall s | fps | peak RSS MiB |"
    echo "|---|---:|---:|---:|---:|---:|"
    for id in short long; do
      echo "| $(clip_label "$id") | ${CDUR[$id]} | ${CFRAMES[$id]} | ${MWALL[$id]} | $(awk -v f="${CFRAMES[$id]}" -v w="${MWALL[$id]}" 'BEGIN { printf "%.1f", (w > 0 ? f / w : 0) }') | $(awk -v k="${MKIB[$id]}" 'BEGIN { printf "%.1f", k / 1024 }') |"
    done
    echo
    echo "Peak RSS of the long clip / the short clip: **$ratio** (target: within 10%, i.e. at most 1.10: $verdict)."
    echo
    echo '```'
    for id in short long; do echo "# clip $(clip_label "$id"): ${CSRC[$id]#generated: }"; done
    side_cmd gpuencode-sepia short "$WORK/short.mp4"
    echo "# run: /usr/bin/time -f '%e %M' $(show_cmd short "$WORK/short.mp4")"
    echo '```'
  } >"$REPORT"
  cat "$REPORT"
  if [ -n "$OUT_MD" ]; then { echo; cat "$REPORT"; } >>"$OUT_MD"; log "appended to $OUT_MD"; fi
  exit 0
fi

# ---- transcode timing: interleaved per clip ---------------------------------------------------------
declare -A TIMES RSS STATE SIZE OUTFRAMES
any_failed=0
for id in "${ACTIVE[@]}"; do
  for s in "${SIDES[@]}"; do
    k=$id/$s; TIMES[$k]=; RSS[$k]=0
    if side_cmd "$s" "$id" "$WORK/out.mp4"; then STATE[$k]=ok; else STATE[$k]="skipped: $SKIP_WHY"; fi
  done
  for ((r = 1; r <= RUNS; r++)); do
    for s in "${SIDES[@]}"; do
      k=$id/$s
      [ "${STATE[$k]}" = ok ] || continue
      out=$WORK/$s.mp4
      rm -f "$out"
      side_cmd "$s" "$id" "$out"
      if time_cmd "$WORK/$s.log" && [ -s "$out" ]; then
        TIMES[$k]+="$WALL "
        [ "$KIB" -gt "${RSS[$k]}" ] && RSS[$k]=$KIB
        log "$(printf '%-8s run %d/%d  %-18s %7s s  %5d MiB' "$id" "$r" "$RUNS" "$s" "$WALL" $((KIB / 1024)))"
      else
        log "error: $s failed on $(clip_label "$id") in run $r; dropping it. Last lines of its output:"
        tail -n 8 "$WORK/$s.log" | sed 's/^/    /' >&2
        STATE[$k]=failed; any_failed=1
      fi
    done
  done
  for s in "${SIDES[@]}"; do
    k=$id/$s
    [ "${STATE[$k]}" = ok ] || continue
    out=$WORK/$s.mp4
    SIZE[$k]=$(awk -v b="$(stat -c %s "$out")" 'BEGIN { printf "%.2f", b / 1e6 }')
    OUTFRAMES[$k]=$(ffprobe -v error -select_streams v:0 -show_entries stream=nb_frames -of csv=p=0 "$out" | head -n 1)
    if [ "${OUTFRAMES[$k]}" != "${CFRAMES[$id]}" ]; then
      note "$s on $(clip_label "$id"): output has ${OUTFRAMES[$k]:-?} video frames, input ${CFRAMES[$id]}"
    fi
    rm -f "$out"
  done
done

# ---- filter stage alone --------------------------------------------------------------------------------
VARIANTS=("sepia direct" "sepia rgba" "identity direct")
[[ " ${SIDES[*]} " == *" gpuencode-1977"* ]] && VARIANTS+=("1977 direct")
[[ " ${SIDES[*]} " == *" gpuencode-blur8"* ]] && VARIANTS+=("heavyblur direct")
declare -A FPS
if [ "$FILTER_FRAMES" -gt 0 ] && [ "$GPU_OK" -eq 1 ]; then
  for id in "${ACTIVE[@]}"; do
    for v in "${VARIANTS[@]}"; do FPS[$id/$v]=; done
    for ((r = 1; r <= RUNS; r++)); do
      for v in "${VARIANTS[@]}"; do
        read -r preset rpath <<<"$v"
        if line=$("$BIN" "${CPATH[$id]}" --benchmark-filters "$FILTER_FRAMES" --preset "$preset" --render-path "$rpath" </dev/null 2>&1); then
          fps=$(printf '%s\n' "$line" | sed -n 's/^filter stage: \([0-9.]*\) fps.*/\1/p' | head -n 1)
          if [ -n "$fps" ]; then
            FPS[$id/$v]+="$fps "
            log "$(printf '%-8s run %d/%d  filters %-16s %8s fps' "$id" "$r" "$RUNS" "$v" "$fps")"
            continue
          fi
        fi
        log "warning: --benchmark-filters failed on $(clip_label "$id") ($v): $(printf '%s' "$line" | tail -n 1)"
      done
    done
  done
elif [ "$FILTER_FRAMES" -gt 0 ]; then
  note "filter-stage table skipped: gpuencode not available"
fi

# ---- the report ------------------------------------------------------------------------------------------
{
  header transcode
  echo
  echo "Whole transcode (decode, filter, x264 encode, mux), $RUNS run(s) per side, interleaved per clip;"
  echo "ratio = median wall time / plain's on the same clip; fps = input frames / median wall time."
  echo
  echo "| clip | side | median wall s | ratio to plain | fps | peak RSS MiB | runs (s) | output MB |"
  echo "|---|---|---:|---:|---:|---:|---|---:|"
  for id in "${ACTIVE[@]}"; do
    label=$(clip_label "$id")
    plain_med=
    [ "${STATE[$id/plain]:-}" = ok ] && plain_med=$(median "${TIMES[$id/plain]}")
    for s in "${SIDES[@]}"; do
      k=$id/$s
      if [ "${STATE[$k]}" != ok ]; then
        echo "| $label | $s | ${STATE[$k]} | | | | | |"; continue
      fi
      med=$(median "${TIMES[$k]}")
      ratio=n/a
      [ -n "$plain_med" ] && ratio=$(awk -v a="$med" -v b="$plain_med" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
      fps=$(awk -v f="${CFRAMES[$id]}" -v w="$med" 'BEGIN { printf "%.1f", (w > 0 ? f / w : 0) }')
      mib=$(awk -v k="${RSS[$k]}" 'BEGIN { printf "%.0f", k / 1024 }')
      echo "| $label | $s | $med | $ratio | $fps | $mib | ${TIMES[$k]% } | ${SIZE[$k]} |"
    done
  done
  if [ "$FILTER_FRAMES" -gt 0 ] && [ "$GPU_OK" -eq 1 ]; then
    echo
    echo "Filter stage alone (\`gpuencode CLIP --benchmark-filters $FILTER_FRAMES --preset P --render-path R\`: decoded"
    echo "frames in memory, upload, filters, YUV readback; no decoder or encoder), median of $RUNS run(s):"
    echo
    hdr="| clip | size |"; sep="|---|---|"
    for v in "${VARIANTS[@]}"; do hdr+=" ${v/ /, } |"; sep+="---:|"; done
    echo "$hdr"; echo "$sep"
    for id in "${ACTIVE[@]}"; do
      row="| $(clip_label "$id") | ${CW[$id]}x${CH[$id]} |"
      for v in "${VARIANTS[@]}"; do
        m=$(median "${FPS[$id/$v]}")
        if [ -n "$m" ]; then row+=" $(fmt "$m" '%.1f') fps ($(awk -v f="$m" 'BEGIN { printf "%.1f", 1000 / f }') ms) |"; else row+=" failed |"; fi
      done
      echo "$row"
    done
  fi
  echo
  echo "Commands (CLIP = the clip, OUT.mp4 = a temporary file):"
  echo
  echo '```'
  for id in "${ACTIVE[@]}"; do echo "# clip $(clip_label "$id"): ${CSRC[$id]}"; done
  for s in "${SIDES[@]}"; do
    id=
    for c in "${ACTIVE[@]}"; do [ "${STATE[$c/$s]}" = ok ] && { id=$c; break; }; done
    [ -n "$id" ] || id=${ACTIVE[0]}
    why=
    side_cmd "$s" "$id" "$WORK/out.mp4" || why=" (skipped: $SKIP_WHY)"
    echo "# $s$why: $(show_cmd "$id" "$WORK/out.mp4")"
  done
  echo '```'
  if [ ${#NOTES[@]} -gt 0 ]; then
    echo
    for n in "${NOTES[@]}"; do echo "- note: $n"; done
  fi
} >"$REPORT"

cat "$REPORT"
if [ -n "$OUT_MD" ]; then
  { echo; cat "$REPORT"; } >>"$OUT_MD"
  log "appended to $OUT_MD"
fi
if [ "$any_failed" -ne 0 ]; then log "error: at least one side failed (see above)"; exit 1; fi
