#!/usr/bin/env bash
# The bench command: builds the gateway once, then measures it against the
# echo floor in one run and prints JSON (see BENCHMARKS.md). Extra flags go
# to the bench binary: --echo N --turns N --sessions N --per-session N.
set -euo pipefail
cd "$(dirname "$0")/.."
export WRANGLER_SEND_METRICS=false CLOUDFLARE_CF_FETCH_ENABLED=false
bash scripts/setup.sh
bash scripts/build-worker.sh >/dev/null
cargo run --quiet --release -p gsv-e2e --bin bench -- "$@"
