#!/usr/bin/env bash
# Soak (not a test): one gpuencode process runs for MINUTES (default 10) while its resident memory is
# sampled every 5 s; the memory must stay flat. Two modes, each a single long-lived process:
#
#   bash bench/soak.sh [MINUTES]                 transcode: an endless testsrc2 stream through a FIFO,
#                                                 filtered with the 1977 look (fused point filters, a blend
#                                                 and a tone curve), until ffmpeg is stopped at MINUTES
#   MODE=batch bash bench/soak.sh [MINUTES]      batch: a CSV manifest of many short clips (each its own
#                                                 decoder, encoder and GL pass plan; contexts pooled), as
#                                                 many rows as fill MINUTES at this machine's speed
#
# Prints the RSS samples per minute and FAILS (exit 1) when the median of the last minute exceeds the
# median of the second minute by more than 10% (the first minute holds the one-time setup: shader JIT,
# pools), or when gpuencode does not exit 0 with a playable output.
# Environment: GPUENCODE (default .build/release/gpuencode), PRESET (1977), SIZE (640x360), OUT (work
# folder; default a new temporary one).
set -u
MINUTES=${1:-10}
MODE=${MODE:-transcode}
G=${GPUENCODE:-.build/release/gpuencode}
PRESET=${PRESET:-1977}
SIZE=${SIZE:-640x360}
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
[ -x "$G" ] || { echo "soak: $G not built (swift build -c release)" >&2; exit 2; }
samples="$OUT/rss.tsv"; : > "$samples"

sample_until() {   # PID SECONDS: VmRSS (kB) every 5 s while PID lives, at most SECONDS
  local pid=$1 end=$(( $(date +%s) + $2 )) start=$(date +%s)
  while kill -0 "$pid" 2>/dev/null && [ "$(date +%s)" -lt "$end" ]; do
    rss=$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null)
    [ -n "$rss" ] && printf '%d\t%d\n' $(( $(date +%s) - start )) "$rss" >> "$samples"
    sleep 5
  done
}

echo "== soak: mode $MODE, $MINUTES min, preset $PRESET, $SIZE, $($G --version 2>/dev/null), $(nproc) cores, work in $OUT"
if [ "$MODE" = transcode ]; then
  fifo="$OUT/stream.mkv"; rm -f "$fifo"; mkfifo "$fifo"
  ffmpeg -nostdin -v error -y -f lavfi -i "testsrc2=size=$SIZE:rate=30" -f lavfi -i "sine=frequency=440:sample_rate=48000" \
    -c:v libx264 -preset ultrafast -crf 30 -g 60 -pix_fmt yuv420p -c:a aac -f matroska "$fifo" &
  producer=$!
  "$G" "$fifo" "$OUT/out.mkv" -y --preset "$PRESET" --x264-preset ultrafast --crf 35 --no-progress &
  pid=$!
  sample_until "$pid" $(( MINUTES * 60 ))
  kill -TERM "$producer" 2>/dev/null   # ffmpeg closes the stream properly; gpuencode sees its end
  wait "$producer" 2>/dev/null
  wait "$pid"; rc=$?
  check="$OUT/out.mkv"
else
  clips="$OUT/clips"; mkdir -p "$clips"
  for i in 1 2 3 4; do
    ffmpeg -nostdin -v error -y -f lavfi -i "testsrc2=size=$SIZE:rate=30" -f lavfi -i "sine=frequency=$((300 + i * 100))" \
      -t 2 -c:v libx264 -preset ultrafast -pix_fmt yuv420p -c:a aac "$clips/c$i.mp4"
  done
  # Rows enough for MINUTES: 360 a minute (this 2-core machine did 3.6 files a second at --jobs 2);
  # the soak stops sampling at MINUTES and the batch is interrupted then (SIGINT: state and report kept).
  manifest="$OUT/manifest.csv"; echo "input,output" > "$manifest"
  for n in $(seq 1 $(( MINUTES * 360 ))); do echo "clips/c$(( n % 4 + 1 )).mp4,outs/o$n.mp4" >> "$manifest"; done
  mkdir -p "$OUT/outs"
  "$G" batch --manifest "$manifest" --preset "$PRESET" --x264-preset ultrafast --crf 35 --jobs 2 --report "$OUT/report.json" --force 2> "$OUT/batch-events.jsonl" &
  pid=$!
  sample_until "$pid" $(( MINUTES * 60 ))
  if kill -0 "$pid" 2>/dev/null; then kill -INT "$pid"; wait "$pid"; rc=$?; [ "$rc" -eq 130 ] && rc=0; else wait "$pid"; rc=$?; fi
  check=$(ls "$OUT"/outs/*.mp4 | head -n 1)
  echo "batch: $(ls "$OUT"/outs/*.mp4 | wc -l) files written"
fi

# Per minute: sample count, min, median and max (sort, not gawk's asort: Debian's awk is mawk).
printf "%-8s %8s %10s %10s %10s\n" minute samples "min MB" "median MB" "max MB"
medians=()
for m in $(cut -f1 "$samples" | awk '{print int($1 / 60)}' | sort -n | uniq); do
  vals=$(awk -F'\t' -v m="$m" 'int($1 / 60) == m {print $2}' "$samples" | sort -n)
  c=$(echo "$vals" | wc -l)
  med=$(echo "$vals" | sed -n "$(( (c + 1) / 2 ))p")
  medians+=("$med")
  printf "%-8d %8d %10.1f %10.1f %10.1f\n" $(( m + 1 )) "$c" "$(echo "$vals" | head -n1)e-3" "${med}e-3" "$(echo "$vals" | tail -n1)e-3"
done
n=${#medians[@]}
base=${medians[$(( n > 1 ? 1 : 0 ))]}
last=${medians[$(( n - 1 ))]}
awk -v a="$last" -v b="$base" 'BEGIN { r = a / b; printf "last-minute median / second-minute median: %.3f\n", r; exit (r > 1.10) ? 1 : 0 }'
flat=$?
frames=$(ffprobe -v error -count_packets -select_streams v:0 -show_entries stream=nb_read_packets -of csv=p=0 "$check" 2>/dev/null)
echo "gpuencode exit $rc; $check: ${frames:-no} video packets"
if [ "$rc" -ne 0 ] || [ -z "$frames" ] || [ "$flat" -ne 0 ]; then echo "soak: FAILED" >&2; exit 1; fi
echo "soak: passed (RSS flat within 10%)"
