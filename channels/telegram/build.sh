#!/usr/bin/env bash
# Builds the Telegram channel Worker to channels/telegram/build/ with
# worker-build, using the repository's wasm-bindgen, wasm-opt (npm
# binaryen) and esbuild instead of letting worker-build download them
# (as scripts/build-worker.sh does for the gateway).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$here"
export WASM_BINDGEN_BIN="${WASM_BINDGEN_BIN:-$(command -v wasm-bindgen)}"
export WASM_OPT_BIN="${WASM_OPT_BIN:-$root/node_modules/.bin/wasm-opt}"
export ESBUILD_BIN="${ESBUILD_BIN:-$root/node_modules/.bin/esbuild}"
worker-build --release "$@"
