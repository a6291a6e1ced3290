#!/usr/bin/env bash
# Benchmark (not a test): the sigma-8 Gaussian, gpuencode --preset heavyblur against ffmpeg's
# gblur=sigma=8 and plain ffmpeg, in whole transcodes (issue 15's blur target: no slower than gblur).
#
#   bench/blur.sh [--runs N] [--clips 1080p,real] [any other bench/compare.sh option]
#
# Runs bench/compare.sh with the sides plain, none, gpuencode-sepia, ffmpeg-blur8 and gpuencode-blur8
# (interleaved per clip, same x264 settings: veryfast, crf 23; default clips: the 10 s testsrc2 1080p
# and the real 360p clip), then adds one table: gpuencode-blur8's median wall time over
# ffmpeg-blur8's on each clip (below 1: gpuencode is faster), each side's min-max, and sepia's ratio
# to plain: sepia is gpuencode's cheapest GPU stage (one fused pass, source planes to NV12), so it
# bounds from below what any blur on the GPU can cost. The Markdown report goes to stdout;
# --out FILE appends it to FILE.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

OUT_MD=
ARGS=(--sides plain,none,gpuencode-sepia,ffmpeg-blur8,gpuencode-blur8 --clips 1080p,real)
while [ $# -gt 0 ]; do
  case $1 in
    --out) [ $# -ge 2 ] || { echo "blur.sh: --out needs a value" >&2; exit 64; }; OUT_MD=$2; shift 2 ;;
    -h|--help) awk 'NR == 1 { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "$0"; exit 0 ;;
    *) ARGS+=("$1"); shift ;;
  esac
done

REPORT=$(bench/compare.sh "${ARGS[@]}")
# The transcode table's rows: | clip | side | median | ratio | fps | RSS | runs (s) | MB |
SUMMARY=$(printf '%s\n' "$REPORT" | awk -F'|' '
  NF >= 9 && $3 ~ /^ *(plain|gpuencode-sepia|ffmpeg-blur8|gpuencode-blur8) *$/ {
    clip = $2; side = $3; gsub(/^ +| +$/, "", clip); gsub(/^ +| +$/, "", side)
    med[clip "/" side] = $4 + 0
    n = split($8, r, " "); lo = r[1]; hi = r[1]
    for (i = 2; i <= n; i++) { if (r[i] + 0 < lo + 0) lo = r[i]; if (r[i] + 0 > hi + 0) hi = r[i] }
    span[clip "/" side] = lo "-" hi
    if (!(clip in seen)) { seen[clip] = 1; order[++count] = clip }
  }
  END {
    if (count == 0) exit
    print ""
    print "Blur target: gpuencode-blur8 over ffmpeg-blur8 (median wall time; below 1: gpuencode faster)."
    print ""
    print "| clip | plain s (min-max) | ffmpeg gblur s (min-max) | gpuencode heavyblur s (min-max) | gblur / plain | heavyblur / plain | heavyblur / gblur | gpuencode sepia / plain |"
    print "|---|---|---|---|---:|---:|---:|---:|"
    for (i = 1; i <= count; i++) {
      c = order[i]; p = med[c "/plain"]; f = med[c "/ffmpeg-blur8"]; g = med[c "/gpuencode-blur8"]
      s = med[c "/gpuencode-sepia"]
      printf "| %s | %.2f (%s) | %.2f (%s) | %.2f (%s) | %.2f | %.2f | %.2f | %.2f |\n", c, p, span[c "/plain"], f, span[c "/ffmpeg-blur8"], g, span[c "/gpuencode-blur8"], (p ? f / p : 0), (p ? g / p : 0), (f ? g / f : 0), (p ? s / p : 0)
    }
  }')
printf '%s\n%s\n' "$REPORT" "$SUMMARY"
if [ -n "$OUT_MD" ]; then printf '%s\n%s\n' "$REPORT" "$SUMMARY" >> "$OUT_MD"; fi
