#!/usr/bin/env bash
# Builds the web UI into web/dist, which the gateway serves as Workers
# static assets ([assets] in wrangler.toml): the wire types generated from
# protocol/src (ts-rs, see protocol/src/ts.rs), a type check of the UI
# against them (tsc), then one esbuild bundle with a size budget
# (web/build.mjs). Offline: npm packages and crates only.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run --quiet --locked -p gsv-protocol --features ts --bin protocol-ts -- web/src/protocol/generated.ts
node_modules/.bin/tsc -p web/tsconfig.json
node web/build.mjs
