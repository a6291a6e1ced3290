#!/usr/bin/env bash
# The H100 table (a benchmark, not a test): the filter stage at 1080p (sepia >= 4500 fps, heavyblur
# >= 3000 fps) and 4K HLG 10-bit -> 1080p SDR against ffmpeg's zscale + tonemap, interleaved.
#
# Pack here (repository root), then run there from the repository root carrying both bundles:
#   swift build -c release --static-swift-stdlib && strip .build/release/gpuencode
#   ../shared/tools/gpu-bundle-slim .build/release/gpuencode [t1080.mp4] && ../shared/tools/ff-bundle
#   run  command: bash bench/h100-render.sh          carry: [".gpu", ".ffb"]
#
#   bench/h100-render.sh [--runs N] [--frames N] [--seconds N]
#
# --runs N (default 3) rounds; --frames N (default 500) for --benchmark-filters; --seconds N (default 3)
# of the generated 4K HLG clip. Clips: .gpu/files/t1080.mp4 if packed, else generated (testsrc2 1080p30,
# x264 crf 18); the 4K HLG clip is generated there (no 4K HLG clip in ../shared/media): testsrc2
# 3840x2160 30 fps converted to BT.2020 HLG by zimg, x265 10-bit crf 18, tagged bt2020/arib-std-b67
# (or .gpu/files/hlg2160.mp4 if packed: the report's "4K HLG clip" line makes it).
# Tools: the bundles (bash .gpu/run gpuencode, bash .ffb/run ffmpeg|time) where ffmpeg is not on PATH,
# else .build/release/gpuencode and ffmpeg. Markdown on stdout and in $OUT/h100-render.md.
set -u
RUNS=3; FRAMES=500; SECS=3
while [ $# -gt 0 ]; do
  case $1 in
    --runs) RUNS=$2; shift 2 ;; --frames) FRAMES=$2; shift 2 ;; --seconds) SECS=$2; shift 2 ;;
    *) echo "h100-render.sh: unknown argument: $1" >&2; exit 64 ;;
  esac
done
OUT=${OUT:-/tmp}
W=$(mktemp -d)
if [ -f .gpu/run ] && [ -f .ffb/run ] && ! command -v ffmpeg >/dev/null 2>&1; then
  G=(bash .gpu/run gpuencode); FF=(bash .ffb/run ffmpeg)
  if [ -x /usr/bin/time ]; then T=(/usr/bin/time); else T=(bash .ffb/run time); fi
else
  G=(.build/release/gpuencode); FF=(ffmpeg); T=(/usr/bin/time)
fi
MD=$OUT/h100-render.md
say() { echo "$*" | tee -a "$MD"; }
median() { tr -s ' ' '\n' <<<"$1" | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END {
  if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

C1080=.gpu/files/t1080.mp4
if [ ! -s "$C1080" ]; then
  C1080=$W/t1080.mp4
  "${FF[@]}" -nostdin -v error -y -f lavfi -i testsrc2=size=1920x1080:rate=30 -t 10 -c:v libx264 -preset veryfast \
    -crf 18 -pix_fmt yuv420p "$C1080" || { echo "h100-render.sh: could not make the 1080p clip" >&2; exit 1; }
fi
HLG=$W/hlg2160.mp4
HLG_GEN=(-nostdin -v error -y -f lavfi -i testsrc2=size=3840x2160:rate=30 -t "$SECS"
  -vf "zscale=tin=bt709:pin=bt709:min=bt709:rin=tv:t=arib-std-b67:p=bt2020:m=bt2020nc:r=tv,format=yuv420p10le"
  -c:v libx265 -preset ultrafast -crf 18 -x265-params log-level=error:colorprim=bt2020:transfer=arib-std-b67:colormatrix=bt2020nc
  -color_primaries bt2020 -color_trc arib-std-b67 -colorspace bt2020nc -tag:v hvc1)
if [ -s .gpu/files/hlg2160.mp4 ]; then HLG=.gpu/files/hlg2160.mp4  # packed (made here with the command below)
else "${FF[@]}" "${HLG_GEN[@]}" "$HLG" || { echo "h100-render.sh: could not make the 4K HLG clip" >&2; exit 1; }; fi
TONEMAP='zscale=w=1920:h=1080:t=linear:npl=100,format=gbrpf32le,zscale=p=bt709,tonemap=hable:desat=0,zscale=t=bt709:m=bt709:r=tv,format=yuv420p'
SIDE_G=("${G[@]}" "$HLG" "$W/g.mp4" --height 1080 -y --x264-preset veryfast --crf 23)
SIDE_F=("${FF[@]}" -nostdin -v error -y -i "$HLG" -vf "$TONEMAP" -c:v libx264 -preset veryfast -crf 23 -pix_fmt yuv420p "$W/f.mp4")

say "### H100: filter stage and 4K HLG -> 1080p (bench/h100-render.sh), $(date -u '+%Y-%m-%d %H:%M UTC')"
say ""
say "- machine: $(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo), $(nproc) cores, GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 1); load before: $(uptime)"
say "- $("${G[@]}" --version 2>&1 | paste -sd '|' - | sed 's/|/; /g')"
declare -A FPS WALL CPU
for ((r = 1; r <= RUNS; r++)); do
  for p in sepia heavyblur; do
    fps=$("${G[@]}" "$C1080" --benchmark-filters "$FRAMES" --preset "$p" 2>&1 | sed -n 's/^filter stage: \([0-9.]*\) fps.*/\1/p' | head -n 1)
    FPS[$p]+="$fps "; echo "round $r: filters $p $fps fps" >&2
  done
  for s in G F; do
    if [ $s = G ]; then cmd=("${SIDE_G[@]}"); else cmd=("${SIDE_F[@]}"); fi
    "${T[@]}" -f '%e %U %S %M' -o "$W/t.txt" "${cmd[@]}" </dev/null >"$W/side.log" 2>&1 || { echo "h100-render.sh: side $s failed:" >&2; tail -n 5 "$W/side.log" >&2; continue; }
    read -r w u sy k < <(tail -n 1 "$W/t.txt")
    WALL[$s]+="$w "; CPU[$s]+="$(awk -v u="$u" -v s="$sy" 'BEGIN { printf "%.2f", u + s }') "
    echo "round $r: 4K HLG side $s $w s wall, $((k / 1000)) MB" >&2
  done
done
met() { awk -v a="$1" -v b="$2" 'BEGIN { print (a != "-" && a + 0 >= b ? "met" : "**not met**") }'; }
say "- load after: $(uptime)"
say ""
say "| measurement | gpuencode | ffmpeg | target | met |"
say "|---|---|---|---|---|"
s=$(median "${FPS[sepia]}"); say "| filter stage 1080p sepia, fps (runs: ${FPS[sepia]% }) | $s | | >= 4500 | $(met "$s" 4500) |"
h=$(median "${FPS[heavyblur]}"); say "| filter stage 1080p heavyblur, fps (runs: ${FPS[heavyblur]% }) | $h | | >= 3000 | $(met "$h" 3000) |"
gw=$(median "${WALL[G]:-}"); fw=$(median "${WALL[F]:-}")
say "| 4K HLG -> 1080p SDR, median wall s / CPU s (gpuencode / ffmpeg wall: $(awk -v a="$gw" -v b="$fw" 'BEGIN { if (b + 0 > 0) printf "%.2fx", a / b; else print "-" }')) | $gw / $(median "${CPU[G]:-}") | $fw / $(median "${CPU[F]:-}") | — | — |"
say ""
say '```'
say "# filters: gpuencode t1080.mp4 --benchmark-filters $FRAMES --preset sepia|heavyblur"
say "# 4K HLG clip: ffmpeg ${HLG_GEN[*]} hlg2160.mp4"
say "# gpuencode: gpuencode hlg2160.mp4 OUT.mp4 --height 1080 -y --x264-preset veryfast --crf 23"
say "# ffmpeg: ffmpeg -i hlg2160.mp4 -vf '$TONEMAP' -c:v libx264 -preset veryfast -crf 23 -pix_fmt yuv420p OUT.mp4"
say '```'
rm -rf "$W"
