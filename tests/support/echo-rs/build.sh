#!/usr/bin/env bash
# Builds the Rust skeleton Worker to tests/support/echo-rs/build/ the way
# scripts/build-worker.sh builds the gateway (the same wasm-bindgen,
# wasm-opt, esbuild and opt-level), so the two floors differ only in code.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
cd "$here"
export WASM_BINDGEN_BIN="${WASM_BINDGEN_BIN:-$(command -v wasm-bindgen)}"
export WASM_OPT_BIN="${WASM_OPT_BIN:-$root/node_modules/.bin/wasm-opt}"
export ESBUILD_BIN="${ESBUILD_BIN:-$root/node_modules/.bin/esbuild}"
export CARGO_PROFILE_RELEASE_OPT_LEVEL="${CARGO_PROFILE_RELEASE_OPT_LEVEL:-z}"
worker-build --release "$@"
