#!/usr/bin/env bash
# Benchmark (not a test): gpuencode's HEVC and AV1 (and H.264) output against ffmpeg with the same
# encoder and the same encoder settings, on one clip, runs interleaved.
#
#   bench/codecs.sh [--runs N] [--codecs h264,hevc,av1] [--speed NAME] [--clip FILE]
#                   [--seconds N] [--size WxH] [--bin PATH] [--out FILE.md]
#
# Clip: testsrc2 at --size (default 1280x720) 30 fps for --seconds (default 5) with a 48 kHz sine
# in AAC, made once into bench/.cache; --clip FILE uses a file instead (its audio must be AAC).
# Per codec four sides, each encoding with that codec's library encoder at the same settings:
#   ffmpeg-plain      ffmpeg, no filter             (the ratios below are relative to this side)
#   ffmpeg-sepia      ffmpeg -vf colorchannelmixer=<GPUImage's sepia matrix>
#   gpuencode-none    gpuencode --preset none       (decode -> encode, no GPU stage)
#   gpuencode-sepia   gpuencode --preset sepia
# Settings: gpuencode --codec C --speed S (default veryfast) and its default crf for the codec; the
# ffmpeg sides get the encoder, preset and crf that gpuencode reports with -v (its "encoder:" line),
# so both sides run the same encoder configuration. Audio is copied on every side.
# Report: median wall seconds, ratio to ffmpeg-plain of the same codec, fps, output size, and
# gpuencode-sepia / ffmpeg-sepia. The Markdown report goes to stdout; --out FILE appends it.
set -euo pipefail

usage() { awk 'NR == 1 { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "$0"; }
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

RUNS=3 CODECS_ARG=h264,hevc,av1 SPEED=veryfast CLIP= SECS=5 SIZE=1280x720 BIN=.build/release/gpuencode OUT_MD=
need_arg() { if [ $# -lt 2 ] || [ -z "$2" ]; then echo "codecs.sh: $1 needs a value" >&2; exit 64; fi; }
while [ $# -gt 0 ]; do
  case $1 in
    --runs) need_arg "$@"; RUNS=$2; shift 2 ;;
    --codecs) need_arg "$@"; CODECS_ARG=$2; shift 2 ;;
    --speed) need_arg "$@"; SPEED=$2; shift 2 ;;
    --clip) need_arg "$@"; CLIP=$2; shift 2 ;;
    --seconds) need_arg "$@"; SECS=$2; shift 2 ;;
    --size) need_arg "$@"; SIZE=$2; shift 2 ;;
    --bin) need_arg "$@"; BIN=$2; shift 2 ;;
    --out) need_arg "$@"; OUT_MD=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "codecs.sh: unknown argument: $1" >&2; usage >&2; exit 64 ;;
  esac
done
case $RUNS in ''|*[!0-9]*|0) echo "codecs.sh: --runs must be a positive integer" >&2; exit 64 ;; esac
case $SECS in ''|*[!0-9]*|0) echo "codecs.sh: --seconds must be a positive integer" >&2; exit 64 ;; esac
[[ $SIZE =~ ^[0-9]+x[0-9]+$ ]] || { echo "codecs.sh: --size is WIDTHxHEIGHT" >&2; exit 64; }
IFS=, read -r -a CODECS <<<"$CODECS_ARG"
for c in "${CODECS[@]}"; do case $c in h264|hevc|av1) ;; *) echo "codecs.sh: unknown codec $c (h264, hevc, av1)" >&2; exit 64 ;; esac; done
[ -x "$BIN" ] || { echo "codecs.sh: $BIN not found (swift build -c release)" >&2; exit 1; }
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
log() { echo "codecs.sh: $*" >&2; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/gpuencode-codecs.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
if [ -z "$CLIP" ]; then
  mkdir -p bench/.cache
  CLIP=$ROOT/bench/.cache/testsrc2_${SIZE}_${SECS}s.mp4
  if [ ! -s "$CLIP" ]; then
    log "generating $CLIP (once)"
    ffmpeg -hide_banner -v error -nostdin -y -f lavfi -i "testsrc2=size=$SIZE:rate=30" -f lavfi -i sine=frequency=440:sample_rate=48000 \
      -t "$SECS" -c:v libx264 -preset veryfast -crf 18 -pix_fmt yuv420p -colorspace bt709 -color_primaries bt709 -color_trc bt709 -c:a aac "$WORK/gen.mp4"
    mv "$WORK/gen.mp4" "$CLIP"
  fi
fi
FRAMES=$(ffprobe -v error -count_packets -select_streams v:0 -show_entries stream=nb_read_packets -of csv=p=0 "$CLIP")

SEPIA='colorchannelmixer=.3588:.7044:.1368:0:.2990:.5870:.1140:0:.2392:.4696:.0912'
declare -A ENCARGS EXT DESC
for c in "${CODECS[@]}"; do
  EXT[$c]=mp4
  # gpuencode's own description of the encoder it opens (-v), which names the speed and crf it used.
  line=$("$BIN" "$CLIP" "$WORK/probe.${EXT[$c]}" --preset none --codec "$c" --speed "$SPEED" -y -v 2>&1 | sed -n 's/^.*encoder: //p' | head -n 1)
  [ -n "$line" ] || { log "error: gpuencode --codec $c did not report its encoder"; exit 1; }
  DESC[$c]=$line
  # "libx265 (speed veryfast, crf 28)", "libsvtav1 (speed veryfast = preset 11, crf 35)"
  preset=$(sed -n 's/.*speed [a-z]* = preset \([0-9]*\).*/\1/p' <<<"$line")
  [ -n "$preset" ] || preset=$(sed -n 's/.*speed \([a-z]*\).*/\1/p' <<<"$line")
  crf=$(sed -n 's/.*crf \([0-9.]*\).*/\1/p' <<<"$line")
  [ -n "$preset" ] && [ -n "$crf" ] || { log "error: cannot read preset and crf from: $line"; exit 1; }
  case $c in
    h264) ENCARGS[$c]="-c:v libx264 -preset $preset -crf $crf -pix_fmt yuv420p" ;;
    hevc) ENCARGS[$c]="-c:v libx265 -preset $preset -crf $crf -pix_fmt yuv420p -tag:v hvc1" ;;
    av1)  ENCARGS[$c]="-c:v libsvtav1 -preset $preset -crf $crf -pix_fmt yuv420p" ;;
  esac
done

side_cmd() {  # side_cmd SIDE CODEC OUT -> CMD
  local enc; read -r -a enc <<<"${ENCARGS[$2]}"
  case $1 in
    ffmpeg-plain) CMD=(ffmpeg -nostdin -v error -y -i "$CLIP" "${enc[@]}" -c:a copy "$3") ;;
    ffmpeg-sepia) CMD=(ffmpeg -nostdin -v error -y -i "$CLIP" -vf "$SEPIA" "${enc[@]}" -c:a copy "$3") ;;
    gpuencode-none) CMD=("$BIN" "$CLIP" "$3" -y --preset none --codec "$2" --speed "$SPEED") ;;
    gpuencode-sepia) CMD=("$BIN" "$CLIP" "$3" -y --preset sepia --codec "$2" --speed "$SPEED") ;;
  esac
}
SIDES=(ffmpeg-plain ffmpeg-sepia gpuencode-none gpuencode-sepia)
median() { tr -s ' ' '\n' <<<"$1" | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

declare -A TIMES SIZE
for c in "${CODECS[@]}"; do for s in "${SIDES[@]}"; do TIMES[$c/$s]=; done; done
for ((r = 1; r <= RUNS; r++)); do
  for c in "${CODECS[@]}"; do
    for s in "${SIDES[@]}"; do
      out=$WORK/$c-$s.${EXT[$c]}
      rm -f "$out"
      side_cmd "$s" "$c" "$out"
      t0=$(date +%s.%N)
      if ! "${CMD[@]}" </dev/null >"$WORK/log" 2>&1; then
        log "error: $c $s failed:"; tail -n 5 "$WORK/log" >&2; exit 1
      fi
      t=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }'); TIMES[$c/$s]+="$t "
      SIZE[$c/$s]=$(stat -c %s "$out")
      n=$(ffprobe -v error -count_packets -select_streams v:0 -show_entries stream=nb_read_packets -of csv=p=0 "$out")
      [ "$n" = "$FRAMES" ] || { log "error: $c $s wrote $n frames, the input has $FRAMES"; exit 1; }
      log "$(printf 'run %d/%d  %-5s %-16s %7s s' "$r" "$RUNS" "$c" "$s" "$t")"
    done
  done
done

REPORT=$WORK/report.md
{
  echo "### gpuencode codecs against ffmpeg, $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo
  echo "- machine: $(nproc) cores, $(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo), $(uname -sr)"
  echo "- $(ffmpeg -hide_banner -version | head -n 1); gpuencode $("$BIN" --version 2>/dev/null)"
  echo "- clip: $(basename "$CLIP"), $FRAMES frames; $RUNS runs per side, interleaved (codec by codec, side by side, run by run)"
  for c in "${CODECS[@]}"; do echo "- $c: gpuencode --codec $c --speed $SPEED opens ${DESC[$c]}; ffmpeg: ${ENCARGS[$c]}"; done
  echo
  echo "| codec | side | median wall s | ratio to ffmpeg-plain | fps | output MB | runs (s) |"
  echo "|---|---|---:|---:|---:|---:|---|"
  for c in "${CODECS[@]}"; do
    base=$(median "${TIMES[$c/ffmpeg-plain]}")
    for s in "${SIDES[@]}"; do
      m=$(median "${TIMES[$c/$s]}")
      awk -v c="$c" -v s="$s" -v m="$m" -v b="$base" -v f="$FRAMES" -v z="${SIZE[$c/$s]}" -v runs="${TIMES[$c/$s]% }" \
        'BEGIN { printf "| %s | %s | %s | %.2f | %.1f | %.2f | %s |\n", c, s, m, m / b, f / m, z / 1e6, runs }'
    done
  done
  echo
  for c in "${CODECS[@]}"; do
    awk -v c="$c" -v g="$(median "${TIMES[$c/gpuencode-sepia]}")" -v f="$(median "${TIMES[$c/ffmpeg-sepia]}")" \
      'BEGIN { printf "- %s: gpuencode-sepia / ffmpeg-sepia = **%.2f**\n", c, g / f }'
  done
} >"$REPORT"
cat "$REPORT"
if [ -n "$OUT_MD" ]; then { echo; cat "$REPORT"; } >>"$OUT_MD"; log "appended to $OUT_MD"; fi
