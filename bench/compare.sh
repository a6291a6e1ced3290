#!/usr/bin/env bash
# Benchmark (not a test): gpuencode against ffmpeg on a 10 s 1080p30 clip.
#
#   bench/compare.sh [--runs N] [--bin PATH] [--clip FILE]
#                    [--x264-preset P] [--crf N] [--out FILE.md]
#
# Sides, each with identical x264 settings and audio copied:
#   plain               ffmpeg, no filter
#   ffmpeg-sepia        ffmpeg -vf colorchannelmixer=<GPUImage sepia matrix>
#   gpuencode-sepia     gpuencode --preset sepia
#   gpuencode-identity  gpuencode --preset identity
# Runs are interleaved (A B C D A B C D ...) and timed with /usr/bin/time; the table gives
# per-side medians of wall time and the largest peak RSS seen. The gpuencode sides are skipped
# with a warning when the binary cannot be built or run.
set -euo pipefail

usage() {
  sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'
}

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

RUNS=3
BIN=.build/release/gpuencode
BIN_GIVEN=0
CLIP=
CLIP_GIVEN=0
X264_PRESET=medium
CRF=23
OUT_MD=

need_arg() { if [ $# -lt 2 ] || [ -z "$2" ]; then echo "compare.sh: $1 needs a value" >&2; exit 64; fi; }
while [ $# -gt 0 ]; do
  case $1 in
    --runs)        need_arg "$@"; RUNS=$2; shift 2 ;;
    --bin)         need_arg "$@"; BIN=$2; BIN_GIVEN=1; shift 2 ;;
    --clip)        need_arg "$@"; CLIP=$2; CLIP_GIVEN=1; shift 2 ;;
    --x264-preset) need_arg "$@"; X264_PRESET=$2; shift 2 ;;
    --crf)         need_arg "$@"; CRF=$2; shift 2 ;;
    --out)         need_arg "$@"; OUT_MD=$2; shift 2 ;;
    -h|--help)     usage; exit 0 ;;
    *) echo "compare.sh: unknown argument: $1" >&2; usage >&2; exit 64 ;;
  esac
done
case $RUNS in ''|*[!0-9]*|0) echo "compare.sh: --runs must be a positive integer" >&2; exit 64 ;; esac

log() { echo "compare.sh: $*" >&2; }

for tool in ffmpeg ffprobe awk; do
  command -v "$tool" >/dev/null 2>&1 || { log "error: $tool not found (bash .ci/install-deps)"; exit 1; }
done
[ -x /usr/bin/time ] || { log "error: /usr/bin/time not found (apt-get install time)"; exit 1; }

CACHE=$ROOT/bench/.cache
mkdir -p "$CACHE"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/gpuencode-bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

# ---- the clip -------------------------------------------------------------------------------
GEN_CMD=(ffmpeg -hide_banner -v error -nostdin -y
  -f lavfi -i testsrc2=size=1920x1080:rate=30
  -f lavfi -i sine=frequency=440:sample_rate=48000
  -t 10 -c:v libx264 -preset veryfast -crf 18 -pix_fmt yuv420p
  -colorspace bt709 -color_primaries bt709 -color_trc bt709 -c:a aac)
if [ -z "$CLIP" ]; then
  CLIP=$CACHE/testsrc2_1080p30_10s.mp4
  if [ ! -s "$CLIP" ]; then
    log "generating $CLIP (once)"
    "${GEN_CMD[@]}" "$CACHE/.clip.tmp.mp4"
    mv "$CACHE/.clip.tmp.mp4" "$CLIP"
  fi
fi
[ -r "$CLIP" ] || { log "error: clip not readable: $CLIP"; exit 66; }
CLIP=$(cd "$(dirname "$CLIP")" && pwd)/$(basename "$CLIP")

# ---- the gpuencode binary ---------------------------------------------------------------------
GPU_OK=1
if [ ! -x "$BIN" ] && [ "$BIN_GIVEN" -eq 0 ]; then
  if ! command -v swift >/dev/null 2>&1 && [ -x /opt/swift/usr/bin/swift ]; then
    export PATH="/opt/swift/usr/bin:$PATH"
  fi
  if command -v swift >/dev/null 2>&1 && [ -f Package.swift ]; then
    log "building $BIN (swift build -c release)"
    swift build -c release >&2 || log "warning: swift build -c release failed"
  else
    log "warning: cannot build $BIN (no swift or no Package.swift)"
  fi
fi
GL_INFO="(not available)"
if [ ! -x "$BIN" ]; then
  log "warning: $BIN not found or not executable: skipping the gpuencode sides"
  GPU_OK=0
elif ! VERSION_OUT=$("$BIN" --version -v </dev/null 2>&1); then
  log "warning: '$BIN --version -v' failed: skipping the gpuencode sides"
  printf '%s\n' "$VERSION_OUT" | tail -n 5 | sed 's/^/    /' >&2
  GPU_OK=0
else
  GL_INFO=$(printf '%s\n' "$VERSION_OUT" | grep -i -m 3 -E 'renderer|GL_|gpu|egl' | paste -sd ';' - || true)
  [ -n "$GL_INFO" ] || GL_INFO=$(printf '%s\n' "$VERSION_OUT" | head -n 3 | paste -sd ';' -)
  BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
fi

# ---- the sides --------------------------------------------------------------------------------
SEPIA='colorchannelmixer=.3588:.7044:.1368:0:.2990:.5870:.1140:0:.2392:.4696:.0912'
# -pix_fmt yuv420p: gpuencode writes yuv420p; without it the colorchannelmixer (RGB) side would let
# libx264 pick yuv444p (High 4:4:4), which is more work and not the same output.
X264=(-c:v libx264 -preset "$X264_PRESET" -crf "$CRF" -pix_fmt yuv420p)
SIDES=(plain ffmpeg-sepia)
[ "$GPU_OK" -eq 1 ] && SIDES+=(gpuencode-sepia gpuencode-identity)

side_cmd() {  # fills CMD for side $1
  local out=$WORK/$1.mp4
  case $1 in
    plain)              CMD=(ffmpeg -nostdin -v error -y -i "$CLIP" "${X264[@]}" -c:a copy "$out") ;;
    ffmpeg-sepia)       CMD=(ffmpeg -nostdin -v error -y -i "$CLIP" -vf "$SEPIA" "${X264[@]}" -c:a copy "$out") ;;
    gpuencode-sepia)    CMD=("$BIN" "$CLIP" "$out" --preset sepia -y --x264-preset "$X264_PRESET" --crf "$CRF") ;;
    gpuencode-identity) CMD=("$BIN" "$CLIP" "$out" --preset identity -y --x264-preset "$X264_PRESET" --crf "$CRF") ;;
  esac
}

declare -A TIMES RSS FAILED
for s in "${SIDES[@]}"; do TIMES[$s]=; RSS[$s]=0; FAILED[$s]=0; done

for ((r = 1; r <= RUNS; r++)); do
  for s in "${SIDES[@]}"; do
    [ "${FAILED[$s]}" -eq 0 ] || continue
    side_cmd "$s"
    tf=$WORK/time.txt
    rm -f "$tf"
    if /usr/bin/time -f '%e %M' -o "$tf" "${CMD[@]}" </dev/null >"$WORK/$s.log" 2>&1; then
      read -r wall kib < <(tail -n 1 "$tf")
      TIMES[$s]+="$wall "
      [ "$kib" -gt "${RSS[$s]}" ] && RSS[$s]=$kib
      log "run $r/$RUNS  $(printf '%-19s' "$s") ${wall} s  $((kib / 1024)) MiB"
    else
      log "error: side $s failed in run $r; dropping it. Last lines of its output:"
      tail -n 8 "$WORK/$s.log" | sed 's/^/    /' >&2
      FAILED[$s]=1
    fi
  done
done

median() {  # median of the space-separated numbers in $1
  tr -s ' ' '\n' <<<"$1" | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END {
    if (NR == 0) { print "" } else if (NR % 2) { print v[(NR + 1) / 2] } else { printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 } }'
}

# ---- the report -------------------------------------------------------------------------------
cpu=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || true)
gpu_hw=
command -v nvidia-smi >/dev/null 2>&1 && gpu_hw=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | paste -sd ',' - || true)
quote() { local out='' a; for a in "$@"; do out+=" $(printf '%q' "$a")"; done; printf '%s' "${out# }"; }

REPORT=$WORK/report.md
{
  echo "### gpuencode vs ffmpeg, $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo
  echo "- machine: $(nproc) cores, ${cpu:-unknown CPU}${gpu_hw:+, GPU: $gpu_hw} ($(uname -sr))"
  echo "- $(ffmpeg -hide_banner -version | head -n 1)"
  echo "- gpuencode GL: $GL_INFO"
  echo "- clip: $(basename "$CLIP"), $(ffprobe -v error -select_streams v:0 -show_entries stream=width,height,r_frame_rate,nb_frames -of csv=p=0 "$CLIP" | awk -F, '{ printf "%sx%s, %s fps, %s frames", $1, $2, $3, $4 }'), $RUNS run(s) per side, interleaved; x264 preset $X264_PRESET, crf $CRF"
  echo
  echo "| side | median wall s | ratio to plain | peak RSS MiB | runs (s) | output MB |"
  echo "|---|---:|---:|---:|---|---:|"
  plain_med=
  [ "${FAILED[plain]}" -eq 0 ] && [ -n "${TIMES[plain]}" ] && plain_med=$(median "${TIMES[plain]}")
  for s in plain ffmpeg-sepia gpuencode-sepia gpuencode-identity; do
    if [ "$GPU_OK" -eq 0 ] && [[ $s == gpuencode-* ]]; then
      echo "| $s | skipped | | | | |"; continue
    fi
    if [ "${FAILED[$s]}" -ne 0 ] || [ -z "${TIMES[$s]}" ]; then
      echo "| $s | failed | | | | |"; continue
    fi
    med=$(median "${TIMES[$s]}")
    ratio=n/a
    [ -n "$plain_med" ] && ratio=$(awk -v a="$med" -v b="$plain_med" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
    mib=$(awk -v k="${RSS[$s]}" 'BEGIN { printf "%.0f", k / 1024 }')
    size=$(awk -v b="$(stat -c %s "$WORK/$s.mp4" 2>/dev/null || echo 0)" 'BEGIN { printf "%.2f", b / 1e6 }')
    echo "| $s | $med | $ratio | $mib | ${TIMES[$s]% } | $size |"
  done
  echo
  echo "Commands (CLIP = the clip above, OUT = a temp file):"
  echo
  echo '```'
  if [ "$CLIP_GIVEN" -eq 0 ]; then echo "# clip: $(quote "${GEN_CMD[@]}") CLIP"; else echo "# clip: given with --clip"; fi
  for s in plain ffmpeg-sepia gpuencode-sepia gpuencode-identity; do
    side_cmd "$s"
    line=$(quote "${CMD[@]}")
    line=${line//$(printf '%q' "$CLIP")/CLIP}
    line=${line//$(printf '%q' "$WORK/$s.mp4")/OUT.mp4}
    [ "$GPU_OK" -eq 0 ] && [[ $s == gpuencode-* ]] && line=${line//$(printf '%q' "$BIN")/gpuencode}
    echo "# $s: $line"
  done
  echo '```'
} >"$REPORT"

cat "$REPORT"
if [ -n "$OUT_MD" ]; then
  { echo; cat "$REPORT"; } >>"$OUT_MD"
  log "appended to $OUT_MD"
fi

for s in "${SIDES[@]}"; do
  if [ "${FAILED[$s]}" -ne 0 ]; then log "error: at least one side failed (see above)"; exit 1; fi
done
