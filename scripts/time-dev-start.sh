#!/usr/bin/env bash
# Times README command 1 (scripts/dev.sh) from its start until the gateway
# serves, twice: the first start builds what changed since the last one
# (everything on a fresh clone), the second, with nothing edited, should
# build nothing. Prints one JSON line. Runs on spare ports (GSV_PORT,
# default 18787) and stops each run once it serves.
# Usage: bash scripts/time-dev-start.sh [RUNS]   (default 2)
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-2}"
port="${GSV_PORT:-18787}"
times=()
for i in $(seq 1 "$runs"); do
  log="$(mktemp)"
  start=$(date +%s.%N)
  setsid env GSV_PORT="$port" GSV_WHATSAPP_PORT="$((port + 1))" GSV_TELEGRAM_PORT="$((port + 2))" bash scripts/dev.sh >"$log" 2>&1 &
  pid=$!
  while ! grep -q "^serving " "$log"; do
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "scripts/dev.sh stopped before it served:" >&2
      tail -n 30 "$log" >&2
      exit 1
    fi
    sleep 0.2
  done
  end=$(date +%s.%N)
  times+=("$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')")
  # dev.sh runs in a session of its own: stop all of it.
  kill -- -"$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  rm -f "$log"
done
printf '{"starts_s": [%s]}\n' "$(IFS=,; echo "${times[*]}")"
