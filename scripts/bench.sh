#!/usr/bin/env bash
# The bench command: builds the gateway and the Discord, WhatsApp, Telegram and WhatsApp Web channels once and
# the release `gsv` (the nodes the bench starts run it), then measures the
# gateway against the echo floor, node tools and Grep against `rg`, and a
# Discord DM turn, a WhatsApp turn and a Telegram turn against the CLI turn, in one run, and prints JSON (see
# BENCHMARKS.md). Extra flags go to the bench binary: --echo N --turns N
# --sessions N --per-session N --tool-turns N --bash-turns N --grep-files N
# --grep-runs N --compact-messages N --reset-messages N --discord-turns N
# --cron-burst N --cron-stored N --cron-cap N --whatsapp-turns N --telegram-turns N
# --memory-nodes N --memory-searches N --memory-turns N
# --history-messages N --history-turns N --startup-runs N --cost-turns N
# --only turns,concurrent,history,prompt,tools,grep,lifecycle,discord,whatsapp,telegram,cron,memory,cost,startup.
# --profile DIR records CPU profiles of the gateway's isolate, one per
# phase run (DIR/turns.cpuprofile, concurrent, history, the tool turns,
# cron-burst; for DevTools) and puts each one's top in the JSON; the
# gateway is then built keeping the Wasm's function names.
# --skeleton-beside also times a skeleton turn after each tool turn
# (toolRoundTrip.*.skeletonTurnBeside; see BENCHMARKS.md, session 25).
# --tool-warmup N gives each of the tool turns' 20 sessions N warm-up turns
# (1 by default, at least 1); with --tool-warmup-elsewhere all but the first go to
# sessions of their own (BENCHMARKS.md, session 27).
# --runs N (this script's own) runs the bench N times after the builds,
# keeps each run's JSON in target/bench-runs/, and prints them as one:
# each figure the median of the runs, each target met in how many
# (BENCHMARKS.md reports the median of three runs). With --profile, each
# run writes its profiles to the same DIR: the last run's are left.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=1
args=()
while (($#)); do
    case "$1" in
        --runs) runs="${2:?--runs needs a number}"; shift 2 ;;
        *) args+=("$1"); shift ;;
    esac
done
set -- ${args[@]+"${args[@]}"}
export WRANGLER_SEND_METRICS=false CLOUDFLARE_CF_FETCH_ENABLED=false
bash scripts/setup.sh >&2 # stdout is the JSON
if [[ " $* " == *" --profile "* ]]; then
    # Function names in the profile: the release build strips them.
    CARGO_PROFILE_RELEASE_STRIP=false bash scripts/build-worker.sh >/dev/null
else
    bash scripts/build-worker.sh >/dev/null
fi
bash channels/discord/build.sh >/dev/null
bash channels/whatsapp/build.sh >/dev/null
bash channels/telegram/build.sh >/dev/null
# WhatsApp Web: the deployable build (its size is measured) and the
# harness's, which the turns run on (it trusts the local double).
bash channels/whatsapp-web/build.sh >/dev/null
bash channels/whatsapp-web/build.sh --test-double --no-opt >/dev/null
# The skeleton turn written with workers-rs (the bench's Rust floor).
bash tests/support/echo-rs/build.sh >/dev/null
cargo build --quiet --release -p gsv
target="${CARGO_TARGET_DIR:-target}"
export GSV_BIN="$(cd "$target" && pwd)/release/gsv"
if ! command -v rg >/dev/null; then
    echo "note: rg (ripgrep) is not installed; Grep is timed without the comparison" >&2
fi
if [[ "$runs" -le 1 ]]; then
    cargo run --quiet --release -p gsv-e2e --bin bench -- "$@"
    exit
fi
cargo build --quiet --release -p gsv-e2e --bin bench
out="$target/bench-runs"
rm -rf "$out"
mkdir -p "$out"
files=()
for i in $(seq 1 "$runs"); do
    echo "[bench] run $i of $runs" >&2
    "$target/release/bench" "$@" >"$out/run-$i.json"
    files+=("$out/run-$i.json")
done
"$target/release/bench" --median "${files[@]}"
