#!/usr/bin/env bash
# Prints wrangler.toml for local runs on the prebuilt worker: the [build]
# section dropped (wrangler would otherwise rebuild, twice, at start-up)
# and `main` made absolute so the config can live anywhere.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
awk -v main="$root/build/index.js" '
  /^\[/ { in_build = ($0 == "[build]") }
  in_build { next }
  /^main = / { printf "main = \"%s\"\n", main; next }
  { print }
' "$root/wrangler.toml"
