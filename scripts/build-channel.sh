#!/usr/bin/env bash
# Builds a channel Worker to its build/ with worker-build, using the
# repository's wasm-bindgen, wasm-opt (npm binaryen) and esbuild instead of
# letting worker-build download them (as scripts/build-worker.sh does for
# the gateway). Each channel's build.sh (its wrangler.toml's [build]) runs it.
# Usage: build-channel.sh CHANNEL_DIR [worker-build options]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "${1:?usage: build-channel.sh CHANNEL_DIR [worker-build options]}"
shift
export WASM_BINDGEN_BIN="${WASM_BINDGEN_BIN:-$(command -v wasm-bindgen)}"
export WASM_OPT_BIN="${WASM_OPT_BIN:-$root/node_modules/.bin/wasm-opt}"
export ESBUILD_BIN="${ESBUILD_BIN:-$root/node_modules/.bin/esbuild}"
worker-build --release "$@"
