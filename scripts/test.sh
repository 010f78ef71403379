#!/usr/bin/env bash
# README command 2: runs every test. Installs what is missing, builds the
# gateway and its web UI once (the end-to-end tests start workerd on that
# build), builds the gsv CLI they drive, then runs the whole workspace's
# tests (the web UI's in a headless Chromium).
set -euo pipefail
cd "$(dirname "$0")/.."
export WRANGLER_SEND_METRICS=false CLOUDFLARE_CF_FETCH_ENABLED=false

bash scripts/setup.sh --browser
echo "[test] checking formatting" >&2
cargo fmt --all -- --check
# The workspace lints (Cargo.toml [workspace.lints]) hold only if warnings
# fail: natively for every crate and target, and for the Workers' wasm32
# code, which a native build does not compile. ~20 s on a warm cache.
echo "[test] clippy" >&2
cargo clippy --workspace --all-targets -- -D warnings
cargo clippy --target wasm32-unknown-unknown -p gsv-gateway -p gsv-channel-discord -p gsv-channel-whatsapp -p gsv-channel-telegram -p gsv-channel-whatsapp-web -p gsv-bench-echo-rs -- -D warnings
# The TypeScript bindings' generator, behind the protocol's `ts` feature.
cargo clippy -p gsv-protocol --features ts --all-targets -- -D warnings
cargo test -p gsv-protocol --features ts --lib
echo "[test] building the gateway (wasm)" >&2
bash scripts/build-worker.sh >/dev/null
echo "[test] building the Discord channel worker (wasm)" >&2
bash channels/discord/build.sh >/dev/null
echo "[test] building the WhatsApp channel worker (wasm)" >&2
bash channels/whatsapp/build.sh >/dev/null
echo "[test] building the Telegram channel worker (wasm)" >&2
bash channels/telegram/build.sh >/dev/null
# Two builds of the WhatsApp Web channel: the deployable one (trusts only
# WhatsApp's root key; a test checks it refuses the local double's chain)
# and the harness's (build-test/, trusts the double; never deployed). Both
# without wasm-opt, which only shrinks (4-5 min on this 5 MB wasm, on two
# cores): `npm run deploy` and the bench build the deployable one with it.
echo "[test] building the WhatsApp Web channel worker (wasm, deployable and test builds)" >&2
bash channels/whatsapp-web/build.sh --no-opt >/dev/null
bash channels/whatsapp-web/build.sh --test-double --no-opt >/dev/null
echo "[test] building the web UI" >&2
bash scripts/build-web.sh
echo "[test] building the gsv CLI" >&2
cargo build -p gsv
cargo test --workspace "$@"
# The web UI in a real Chromium (tests/Cargo.toml says why it runs apart):
# every test must pass, in this run or, if one failed, in a second one.
echo "[test] the web UI in headless Chromium" >&2
cargo test -p gsv-e2e --test web_ui "$@" || {
    echo "[test] a web UI test failed; running the web UI tests once more" >&2
    cargo test -p gsv-e2e --test web_ui "$@"
}
