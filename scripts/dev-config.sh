#!/usr/bin/env bash
# Prints a Worker's wrangler.toml for local runs on its prebuilt output:
# the [build] section dropped (wrangler would otherwise rebuild, twice, at
# start-up), the [ai] binding too (Workers AI runs on Cloudflare only: a
# local run would need a Cloudflare login and the network) and `main` and the assets' `directory` made absolute so the
# config can live anywhere.
# Usage: dev-config.sh [WORKER_DIR]   (default: the gateway, the repo root)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$(cd "${1:-$root}" && pwd)"
awk -v main="$dir/build/index.js" -v dir="$dir" '
  /^\[/ { in_build = ($0 == "[build]" || $0 == "[ai]") }
  in_build { next }
  /^main = / { printf "main = \"%s\"\n", main; next }
  /^directory = "/ { d = $0; sub(/^directory = "/, "", d); printf "directory = \"%s/%s\n", dir, d; next }
  { print }
' "$dir/wrangler.toml"
