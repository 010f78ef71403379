#!/usr/bin/env bash
# Builds the gateway to build/ with worker-build, using the locally
# installed wasm-bindgen, wasm-opt (npm binaryen) and esbuild instead of
# letting worker-build download them.
set -euo pipefail
cd "$(dirname "$0")/.."
export WASM_BINDGEN_BIN="${WASM_BINDGEN_BIN:-$(command -v wasm-bindgen)}"
export WASM_OPT_BIN="${WASM_OPT_BIN:-$PWD/node_modules/.bin/wasm-opt}"
export ESBUILD_BIN="${ESBUILD_BIN:-$PWD/node_modules/.bin/esbuild}"
# The gateway's Wasm for size ("z" instead of the workspace's "s"): 9 %
# smaller gzipped, with no turn time to tell them apart (BENCHMARKS.md).
export CARGO_PROFILE_RELEASE_OPT_LEVEL="${CARGO_PROFILE_RELEASE_OPT_LEVEL:-z}"
worker-build --release "$@"
