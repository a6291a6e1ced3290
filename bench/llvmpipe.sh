#!/usr/bin/env bash
# The llvmpipe table (a benchmark, not a test): gpuencode against ffmpeg on the CPU, side by side,
# interleaved (every side once per round, A B C ... A B C ...), x264 veryfast crf 23, yuv420p, audio copied.
#
#   bench/llvmpipe.sh [--runs N] [--seconds N] [--bin PATH] [--only JOB,...] [--out FILE.md]
#
# --runs N       rounds (default 3); the table gives medians of wall and CPU (user + system) seconds
# --seconds N    length of the generated clips (default 10)
# --bin PATH     gpuencode (default .build/release/gpuencode; build it with swift build -c release)
# --only LIST    some of the jobs below, comma-separated (default: all)
# --out FILE     also append the Markdown report to FILE
#
# Jobs (targets from the issue; ratio = gpuencode / the ffmpeg side, median wall):
#   sepia     gpuencode --preset sepia against plain ffmpeg (no filter), 1080p and 360p (<= 1.15x), and
#             ffmpeg's colorchannelmixer sepia beside them
#   scale720  1080p -> 720p with sepia: --preset sepia --height 720 against scale=-2:720:flags=lanczos,
#             colorchannelmixer; PSNR of gpuencode's output against ffmpeg's (>= 38 dB)
#   blur      --preset heavyblur against gblur=sigma=8, 1080p and 360p
#   hlg       HLG 10-bit 1080p -> SDR: gpuencode's default tone mapping against zscale + tonemap=hable,
#             on the generated clip and the real phone clip (its HLG base layer: --dolby-vision base);
#             PSNR of gpuencode against libplacebo's
#             tone mapping (Vulkan, lavapipe here) of the real clip (>= 45 dB)
#   1977      --preset 1977 against ffmpeg's 1977 filtergraph (bench/compare.sh's), 1080p (<= 0.85x)
#   rss       peak RSS of the 1080p sepia transcode (<= 350 MB, MB = 10^6 bytes; from the sepia runs)
#
# Clips, made once into bench/.cache (ffmpeg CLI):
#   1080p     testsrc2 1920x1080 30 fps, 440 Hz sine in AAC, x264 veryfast crf 18, BT.709 (as compare.sh)
#   360p      ../shared/media/h264_aac_360p_rooftop_17s.mp4 (real camera footage)
#   hlg       testsrc2 1920x1080 30 fps converted to BT.2020 HLG by zimg, x265 10-bit crf 18, tagged
#             bt2020 / arib-std-b67 / bt2020nc, AAC, upright
#   hlgreal   ../shared/media/hevc10_hlg_aac_1080p_editlist_bframes_rot90.mp4 (phone HLG, rotated)
# Markdown on stdout: machine, load before and after, versions, every exact command, the table.
set -euo pipefail

usage() { awk 'NR == 1 { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "$0"; }

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

RUNS=3
SECS=10
BIN=.build/release/gpuencode
ONLY=sepia,scale720,blur,hlg,1977,rss
OUT_MD=
need() { if [ $# -lt 2 ] || [ -z "$2" ]; then echo "llvmpipe.sh: $1 needs a value" >&2; exit 64; fi; }
while [ $# -gt 0 ]; do
  case $1 in
    --runs)    need "$@"; RUNS=$2; shift 2 ;;
    --seconds) need "$@"; SECS=$2; shift 2 ;;
    --bin)     need "$@"; BIN=$2; shift 2 ;;
    --only)    need "$@"; ONLY=$2; shift 2 ;;
    --out)     need "$@"; OUT_MD=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "llvmpipe.sh: unknown argument: $1" >&2; usage >&2; exit 64 ;;
  esac
done
bad() { echo "llvmpipe.sh: $*" >&2; exit 64; }
case $RUNS in ''|*[!0-9]*|0) bad "--runs must be a positive integer" ;; esac
case $SECS in ''|*[!0-9]*|0) bad "--seconds must be a positive integer" ;; esac
declare -A JOB=()
IFS=, read -r -a JOBS <<<"$ONLY"
for j in "${JOBS[@]}"; do
  case $j in sepia|scale720|blur|hlg|1977|rss) JOB[$j]=1 ;; *) bad "--only: unknown job '$j' (sepia scale720 blur hlg 1977 rss)" ;; esac
done
log() { echo "llvmpipe.sh: $*" >&2; }
for tool in ffmpeg ffprobe awk; do command -v "$tool" >/dev/null 2>&1 || { log "error: $tool not found"; exit 1; }; done
[ -x /usr/bin/time ] || { log "error: /usr/bin/time not found (apt-get install time)"; exit 1; }
[ -x "$BIN" ] || { log "error: $BIN not found (swift build -c release)"; exit 1; }
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")

CACHE=$ROOT/bench/.cache
MEDIA=$ROOT/../shared/media
mkdir -p "$CACHE"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/gpuencode-llvmpipe.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
LOAD_BEFORE=$(uptime)

quote() {  # shell-quotes each argument that needs it
  local out='' a
  for a in "$@"; do case $a in ''|*[!A-Za-z0-9_./:=,+@%^-]*) out+=" $(printf '%q' "$a")" ;; *) out+=" $a" ;; esac; done
  printf '%s' "${out# }"
}
median() { tr -s ' ' '\n' <<<"$1" | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END {
  if (NR == 0) print ""; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
calc() { awk "BEGIN { $1 }"; }

# ---- clips -----------------------------------------------------------------------------------------
declare -A CLIP CLIPDESC
CLIPCMDS=()
make_clip() {  # ID NAME CMD... (CMD writes the file given last)
  local id=$1 name=$2; shift 2
  CLIP[$id]=$CACHE/$name
  CLIPCMDS+=("# clip $id = bench/.cache/$name: $(quote "$@") $name")
  if [ ! -s "${CLIP[$id]}" ]; then
    log "making bench/.cache/$name (once)"
    "$@" "$CACHE/.tmp.$name"
    mv "$CACHE/.tmp.$name" "${CLIP[$id]}"
  fi
}
use_file() {  # ID FILE
  [ -s "$MEDIA/$2" ] || { log "error: ../shared/media/$2 not found"; exit 66; }
  CLIP[$1]=$(cd "$MEDIA" && pwd)/$2
  CLIPCMDS+=("# clip $1 = ../shared/media/$2")
}
GEN=(ffmpeg -hide_banner -v error -nostdin -y -f lavfi -i "testsrc2=size=1920x1080:rate=30"
  -f lavfi -i sine=frequency=440:sample_rate=48000 -t "$SECS")
need_1080=0; need_360=0; need_hlg=0
for j in sepia scale720 blur 1977 rss; do [ -n "${JOB[$j]:-}" ] && need_1080=1; done
for j in sepia blur; do [ -n "${JOB[$j]:-}" ] && need_360=1; done
[ -n "${JOB[hlg]:-}" ] && need_hlg=1
[ $need_1080 = 1 ] && make_clip 1080p "testsrc2_1080p30_${SECS}s.mp4" "${GEN[@]}" -c:v libx264 -preset veryfast -crf 18 \
  -pix_fmt yuv420p -colorspace bt709 -color_primaries bt709 -color_trc bt709 -c:a aac
[ $need_360 = 1 ] && use_file 360p h264_aac_360p_rooftop_17s.mp4
if [ $need_hlg = 1 ]; then
  make_clip hlg "testsrc2_1080p30_hlg10_${SECS}s.mp4" "${GEN[@]}" \
    -vf "zscale=tin=bt709:pin=bt709:min=bt709:rin=tv:t=arib-std-b67:p=bt2020:m=bt2020nc:r=tv,format=yuv420p10le" \
    -c:v libx265 -preset fast -crf 18 -x265-params log-level=error:colorprim=bt2020:transfer=arib-std-b67:colormatrix=bt2020nc \
    -color_primaries bt2020 -color_trc arib-std-b67 -colorspace bt2020nc -tag:v hvc1 -c:a aac
  use_file hlgreal hevc10_hlg_aac_1080p_editlist_bframes_rot90.mp4
fi

# ---- sides -----------------------------------------------------------------------------------------
SEPIA='colorchannelmixer=.3588:.7044:.1368:0:.2990:.5870:.1140:0:.2392:.4696:.0912'
X264=(-c:v libx264 -preset veryfast -crf 23 -pix_fmt yuv420p)
GX264=(-y --x264-preset veryfast --crf 23)
HABLE='zscale=t=linear:npl=100,format=gbrpf32le,zscale=p=bt709,tonemap=hable:desat=0,zscale=t=bt709:m=bt709:r=tv,format=yuv420p'
f1977() {  # ffmpeg's closest filtergraph to the 1977 look (bench/compare.sh's): eq, hue, screen blend, curves
  local g="[0:v]eq=contrast=1.05:brightness=0.1:saturation=1.3,hue=h=17.19,format=gbrp[a];"
  g+="color=c=0xF36ABC:size=1920x1080:rate=30,format=gbrp[b];"
  g+="[a][b]blend=all_mode=screen:all_opacity=0.1:shortest=1,curves=all='0/0 0.25/0.20 0.5/0.5 0.75/0.80 1/1'[v]"
  printf '%s' "$g"
}
# side_cmd SIDE CLIP OUT: fills CMD.
side_cmd() {
  local in=${CLIP[$2]} out=$3
  case $1 in
    plain)     CMD=(ffmpeg -nostdin -v error -y -i "$in" "${X264[@]}" -c:a copy "$out") ;;
    ff-sepia)  CMD=(ffmpeg -nostdin -v error -y -i "$in" -vf "$SEPIA" "${X264[@]}" -c:a copy "$out") ;;
    ff-720)    CMD=(ffmpeg -nostdin -v error -y -i "$in" -vf "scale=-2:720:flags=lanczos,$SEPIA" "${X264[@]}" -c:a copy "$out") ;;
    ff-blur)   CMD=(ffmpeg -nostdin -v error -y -i "$in" -vf gblur=sigma=8 "${X264[@]}" -c:a copy "$out") ;;
    ff-hlg)    CMD=(ffmpeg -nostdin -v error -y -i "$in" -vf "$HABLE" "${X264[@]}" -c:a copy "$out") ;;
    ff-1977)   CMD=(ffmpeg -nostdin -v error -y -i "$in" -filter_complex "$(f1977)" -map "[v]" -map "0:a?" "${X264[@]}" -c:a copy "$out") ;;
    g-sepia)   CMD=("$BIN" "$in" "$out" --preset sepia "${GX264[@]}") ;;
    g-720)     CMD=("$BIN" "$in" "$out" --preset sepia --height 720 "${GX264[@]}") ;;
    g-blur)    CMD=("$BIN" "$in" "$out" --preset heavyblur "${GX264[@]}") ;;
    # The real clip carries a Dolby Vision record: ffmpeg's chain shows the HLG base layer, so ours does too.
    g-hlg)     CMD=("$BIN" "$in" "$out" "${GX264[@]}"); if [ "$2" = hlgreal ]; then CMD+=(--dolby-vision base); fi ;;
    g-1977)    CMD=("$BIN" "$in" "$out" --preset 1977 "${GX264[@]}") ;;
  esac
}
show_cmd() {  # the command as printed: paths replaced by names
  local line; line=$(quote "${CMD[@]}")
  line=${line//$(quote "$BIN")/gpuencode}; line=${line//$(quote "$CACHE")\//bench/.cache/}
  line=${line//$(quote "$(cd "$MEDIA" && pwd)")\//../shared/media/}; line=${line//$WORK\//}
  printf '%s' "$line"
}

# What runs, in this order within each round: "SIDE@CLIP".
RUNLIST=()
add() { local x; for x in "$@"; do case " ${RUNLIST[*]:-} " in *" $x "*) ;; *) RUNLIST+=("$x") ;; esac; done; }
if [ -n "${JOB[sepia]:-}" ]; then add plain@1080p g-sepia@1080p ff-sepia@1080p plain@360p g-sepia@360p ff-sepia@360p; fi
[ -n "${JOB[rss]:-}" ] && add g-sepia@1080p
[ -n "${JOB[scale720]:-}" ] && add g-720@1080p ff-720@1080p
[ -n "${JOB[blur]:-}" ] && add g-blur@1080p ff-blur@1080p g-blur@360p ff-blur@360p
[ -n "${JOB[hlg]:-}" ] && add g-hlg@hlg ff-hlg@hlg g-hlg@hlgreal ff-hlg@hlgreal
[ -n "${JOB[1977]:-}" ] && add g-1977@1080p ff-1977@1080p

# ---- timing, interleaved ---------------------------------------------------------------------------
declare -A WALLS CPUS PEAK
for x in "${RUNLIST[@]}"; do WALLS[$x]=; CPUS[$x]=; PEAK[$x]=0; done
for ((r = 1; r <= RUNS; r++)); do
  for x in "${RUNLIST[@]}"; do
    side=${x%@*}; clip=${x#*@}; out=$WORK/${side}_$clip.mp4
    side_cmd "$side" "$clip" "$out"
    if ! /usr/bin/time -f '%e %U %S %M' -o "$WORK/time.txt" "${CMD[@]}" </dev/null >"$WORK/side.log" 2>&1; then
      log "error: $x failed in round $r:"; tail -n 5 "$WORK/side.log" | sed 's/^/    /' >&2; exit 1
    fi
    read -r w u s k < <(tail -n 1 "$WORK/time.txt")
    WALLS[$x]+="$w "; CPUS[$x]+="$(calc "printf \"%.2f\", $u + $s") "
    [ "$k" -gt "${PEAK[$x]}" ] && PEAK[$x]=$k
    log "$(printf 'round %d/%d  %-16s %7s s wall %7s s CPU %5d MB' "$r" "$RUNS" "$x" "$w" "$(calc "printf \"%.2f\", $u + $s")" $((k / 1000)))"
  done
done

# PSNR (ffmpeg's psnr filter, average over the frames): gpuencode's output against the reference, frame
# by frame in order (setpts: ours keeps an edit list's start, 39 ms on the real HLG clip, where ffmpeg
# starts at 0, and the filter would otherwise pair frames by time, one apart).
PSNR_GRAPH='[0:v]format=yuv420p,setpts=N/(30*TB)[a];[1:v]format=yuv420p,setpts=N/(30*TB)[b];[a][b]psnr'
psnr() {
  ffmpeg -nostdin -hide_banner -i "$1" -i "$2" -lavfi "$PSNR_GRAPH" -f null - 2>&1 |
    sed -n 's/.*PSNR .*average:\([0-9.inf]*\).*/\1/p' | tail -n 1 | awk '{ printf ($1 == "inf" ? "inf" : "%.2f"), $1 }' || true
}
PSNR_CMDS=()
PSNR_720=; PSNR_PL=
if [ -n "${JOB[scale720]:-}" ]; then
  PSNR_720=$(psnr "$WORK/g-720_1080p.mp4" "$WORK/ff-720_1080p.mp4")
  PSNR_CMDS+=("# psnr scale720: ffmpeg -i g-720_1080p.mp4 -i ff-720_1080p.mp4 -lavfi '$PSNR_GRAPH' -f null -")
fi
if [ -n "${JOB[hlg]:-}" ]; then
  # (The clip carries a Dolby Vision record: libplacebo applies its RPU, as gpuencode does by default.)
  PL="format=yuv420p10le,hwupload,libplacebo=tonemapping=bt.2390:colorspace=bt709:color_primaries=bt709:color_trc=bt709:range=tv:format=yuv420p,hwdownload,format=yuv420p"
  G_PL=("$BIN" "${CLIP[hlgreal]}" "$WORK/pl-ours.mkv" -y --crf 0)
  F_PL=(ffmpeg -nostdin -v error -y -init_hw_device vulkan=vk -filter_hw_device vk -i "${CLIP[hlgreal]}" -vf "$PL" -an -c:v ffv1 "$WORK/pl-ref.mkv")
  if "${G_PL[@]}" </dev/null >"$WORK/pl.log" 2>&1 && "${F_PL[@]}" </dev/null >>"$WORK/pl.log" 2>&1; then
    PSNR_PL=$(psnr "$WORK/pl-ours.mkv" "$WORK/pl-ref.mkv")
  else
    log "warning: the libplacebo comparison failed:"; tail -n 3 "$WORK/pl.log" | sed 's/^/    /' >&2
  fi
  CMD=("${G_PL[@]}"); PSNR_CMDS+=("# psnr hlg, ours: $(show_cmd)")
  CMD=("${F_PL[@]}"); PSNR_CMDS+=("# psnr hlg, libplacebo: $(show_cmd); then ffmpeg -i pl-ours.mkv -i pl-ref.mkv -lavfi '$PSNR_GRAPH' -f null -")
fi
LOAD_AFTER=$(uptime)

# ---- report ----------------------------------------------------------------------------------------
mb() { calc "printf \"%.0f\", ${PEAK[$1]} / 1000"; }
ratio() { calc "printf \"%.2f\", ($2 > 0 ? $1 / $2 : 0)"; }
verdict() { calc "print (($1) ? \"met\" : \"**not met**\")"; }
row() {  # JOB CLIPLABEL GSIDE@CLIP FSIDE@CLIP FLABEL TARGET_TEXT MAX_RATIO (empty: no target)
  local g=$3 f=$4 gw gc fw fc rw rc met=—
  gw=$(median "${WALLS[$g]}"); gc=$(median "${CPUS[$g]}"); fw=$(median "${WALLS[$f]}"); fc=$(median "${CPUS[$f]}")
  rw=$(ratio "$gw" "$fw"); rc=$(ratio "$gc" "$fc")
  [ -n "$7" ] && met=$(verdict "$rw <= $7")
  echo "| $1 | $2 | $gw / $gc / $(mb "$g") | $5 | $fw / $fc / $(mb "$f") | ${rw}x / ${rc}x | ${6:-—} | $met |"
}
cpu=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || true)
commit=$(git -C "$ROOT" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
git -C "$ROOT" diff --quiet HEAD 2>/dev/null || commit+=" (with uncommitted changes)"
{
  echo "### llvmpipe: gpuencode against ffmpeg (bench/llvmpipe.sh), $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo
  echo "- machine: ${cpu:-unknown CPU}, $(nproc) cores, $(awk '/^MemTotal/ { printf "%.0f", $2 / 1048576 }' /proc/meminfo) GiB ($(uname -sr))"
  echo "- load before: \`${LOAD_BEFORE# }\`; after: \`${LOAD_AFTER# }\`"
  echo "- gpuencode: $("$BIN" --version 2>/dev/null | paste -sd ';' - | sed 's/;/; /g'); tree at $commit"
  echo "- $(ffmpeg -hide_banner -version | head -n 1)"
  echo "- $RUNS round(s), interleaved; medians; CPU = user + system seconds; RSS = peak (\`/usr/bin/time -f %M\`, largest of the rounds), MB = 10^6 bytes"
  echo
  echo "| job | clip | gpuencode wall s / CPU s / RSS MB | ffmpeg side | ffmpeg wall s / CPU s / RSS MB | ratio wall / CPU | target | met |"
  echo "|---|---|---|---|---|---|---|---|"
  if [ -n "${JOB[sepia]:-}" ]; then
    for c in 1080p 360p; do
      row sepia "$c" "g-sepia@$c" "plain@$c" "plain (no filter)" "<= 1.15x plain" 1.15
      row sepia "$c" "g-sepia@$c" "ff-sepia@$c" "colorchannelmixer sepia" "" ""
    done
  fi
  if [ -n "${JOB[scale720]:-}" ]; then
    row scale720 "1080p -> 720p" g-720@1080p ff-720@1080p "scale lanczos + colorchannelmixer" "<= 1.00x" 1.00
    echo "| scale720 | PSNR gpuencode vs ffmpeg | ${PSNR_720:-failed} dB | | | | >= 38 dB | $(verdict "${PSNR_720:-0} >= 38") |"
  fi
  if [ -n "${JOB[blur]:-}" ]; then
    for c in 1080p 360p; do row heavyblur "$c" "g-blur@$c" "ff-blur@$c" "gblur=sigma=8" "<= 1.00x" 1.00; done
  fi
  if [ -n "${JOB[hlg]:-}" ]; then
    row "HLG -> SDR" "hlg (generated)" g-hlg@hlg ff-hlg@hlg "zscale + tonemap=hable" "<= 1.00x" 1.00
    row "HLG -> SDR" "hlgreal (--dolby-vision base)" g-hlg@hlgreal ff-hlg@hlgreal "zscale + tonemap=hable" "<= 1.00x" 1.00
    echo "| HLG -> SDR | PSNR gpuencode vs libplacebo (hlgreal) | ${PSNR_PL:-failed} dB | | | | >= 45 dB | $(verdict "${PSNR_PL:-0} >= 45") |"
  fi
  [ -n "${JOB[1977]:-}" ] && row 1977 1080p g-1977@1080p ff-1977@1080p "1977 filtergraph" "<= 0.85x" 0.85
  if [ -n "${JOB[rss]:-}" ]; then
    echo "| peak RSS | 1080p sepia | $(mb g-sepia@1080p) MB | | | | <= 350 MB | $(verdict "${PEAK[g-sepia@1080p]} <= 350000") |"
  fi
  echo
  echo "Commands (OUT.mp4: a temporary file; each timed as \`/usr/bin/time -f '%e %U %S %M'\`):"
  echo
  echo '```'
  for c in "${CLIPCMDS[@]}"; do echo "$c"; done
  for x in "${RUNLIST[@]}"; do
    side_cmd "${x%@*}" "${x#*@}" "$WORK/OUT.mp4"
    echo "# $x: $(show_cmd)"
  done
  for c in "${PSNR_CMDS[@]}"; do echo "$c"; done
  echo '```'
} >"$WORK/report.md"
cat "$WORK/report.md"
if [ -n "$OUT_MD" ]; then { echo; cat "$WORK/report.md"; } >>"$OUT_MD"; log "appended to $OUT_MD"; fi
