#!/usr/bin/env bash
# README command 1: sets up everything, builds the gateway, the web UI,
# the Discord, WhatsApp, Telegram and WhatsApp Web channels and the `gsv` CLI (each only when what
# it is built from changed), makes an auth token on first run and gives it
# to the CLI, then runs the gateway and the
# channels in one workerd (wrangler's local runtime) on 127.0.0.1:8787,
# with their SQLite and R2 state kept in .gsv/state. The channels stay idle
# until started (`gsv channel start discord --bot-token …`, `gsv channel
# start whatsapp --phone-number-id … --access-token …`, `gsv channel start
# telegram --bot-token …`); WhatsApp's webhook listens on 127.0.0.1:8788
# (GSV_WHATSAPP_PORT) for a tunnel to bring Meta to, with the WHATSAPP_*
# secrets taken from .dev.vars. Telegram needs no tunnel: without a public
# URL its accounts long-poll; its webhook listens on 127.0.0.1:8789
# (GSV_TELEGRAM_PORT) for `--public-url https://<tunnel>` should you want one.
# WhatsApp Web (your own number, linked as a device) needs no port either:
# `gsv channel login whatsapp-web` shows the QR code to scan.
set -euo pipefail
cd "$(dirname "$0")/.."
say() { printf '\033[1m[gsv]\033[0m %s\n' "$*" >&2; }
PORT="${GSV_PORT:-8787}"
WHATSAPP_PORT="${GSV_WHATSAPP_PORT:-8788}"
TELEGRAM_PORT="${GSV_TELEGRAM_PORT:-8789}"

bash scripts/setup.sh
# Each part is built when what it is built from changed since its last
# build (scripts/build-changed.sh): a first start builds everything (about
# nine minutes on two cores), a later one with nothing edited serves in
# seconds.
crates=(protocol worker-sql worker-start channel-worker Cargo.toml Cargo.lock)
# What every channel is built with, besides its own directory.
channel_build=scripts/build-channel.sh
built() { bash scripts/build-changed.sh "$@"; }
say "the gateway (wasm)"
built gateway build/index.js src "${crates[@]}" scripts/build-worker.sh -- \
  bash -c 'bash scripts/build-worker.sh >/dev/null'
say "the web UI"
built web web/dist/index.html web protocol package.json package-lock.json scripts/build-web.sh -- \
  bash scripts/build-web.sh
say "the Discord channel (wasm)"
built discord channels/discord/build/index.js channels/discord "${crates[@]}" "$channel_build" -- \
  bash -c 'bash channels/discord/build.sh >/dev/null'
say "the WhatsApp channel (wasm)"
built whatsapp channels/whatsapp/build/index.js channels/whatsapp "${crates[@]}" "$channel_build" -- \
  bash -c 'bash channels/whatsapp/build.sh >/dev/null'
say "the Telegram channel (wasm)"
built telegram channels/telegram/build/index.js channels/telegram "${crates[@]}" "$channel_build" -- \
  bash -c 'bash channels/telegram/build.sh >/dev/null'
say "the WhatsApp Web channel (wasm)"
built whatsapp-web channels/whatsapp-web/build/index.js channels/whatsapp-web "${crates[@]}" "$channel_build" -- \
  bash -c 'bash channels/whatsapp-web/build.sh >/dev/null'
say "the gsv CLI (into ~/.cargo/bin)"
built cli "${CARGO_HOME:-$HOME/.cargo}/bin/gsv" node-cli protocol Cargo.toml Cargo.lock -- \
  cargo install --quiet --locked --path node-cli --target-dir target/install

mkdir -p .gsv
if ! grep -qs '^GSV_AUTH_TOKEN=' .dev.vars; then
  token="$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')"
  umask 077
  echo "GSV_AUTH_TOKEN=$token" >> .dev.vars
  say "generated an auth token into .dev.vars"
fi
token="$(grep '^GSV_AUTH_TOKEN=' .dev.vars | tail -n1 | cut -d= -f2-)"
gsv local-config set gateway.url "ws://127.0.0.1:$PORT/ws" >/dev/null
gsv local-config set gateway.token "$token" >/dev/null
say "the gsv CLI is configured for ws://127.0.0.1:$PORT/ws"
say "the web UI: http://127.0.0.1:$PORT/ (its token is GSV_AUTH_TOKEN in .dev.vars)"
say "WhatsApp's webhook: http://127.0.0.1:$WHATSAPP_PORT/webhook (see channels/whatsapp/README.md)"
say "Telegram's webhook: http://127.0.0.1:$TELEGRAM_PORT/webhook/<account> (accounts long-poll unless started with --public-url; see channels/telegram/README.md)"
say "WhatsApp on your own number: gsv channel login whatsapp-web (see channels/whatsapp-web/README.md)"
say "next, in another terminal: gsv config set apiKeys.anthropic <key>   (or model.provider/openai etc.)"
say "                            gsv chat \"hello\""

# wrangler reads secrets from the .dev.vars beside the config it runs; the
# channel's key is derived from the token (see protocol/src/channel_key.rs).
bash scripts/dev-config.sh > .gsv/wrangler.dev.toml
bash scripts/dev-config.sh channels/discord > .gsv/discord.dev.toml
bash scripts/dev-config.sh channels/whatsapp > .gsv/whatsapp.dev.toml
bash scripts/dev-config.sh channels/telegram > .gsv/telegram.dev.toml
bash scripts/dev-config.sh channels/whatsapp-web > .gsv/whatsapp-web.dev.toml
key="$(printf '%s' "$token" | node scripts/channel-key.mjs)"
(umask 077; { cat .dev.vars; echo "GSV_CHANNEL_KEY=$key"; } > .gsv/.dev.vars)
export WRANGLER_SEND_METRICS=false CLOUDFLARE_CF_FETCH_ENABLED=false
# wrangler's local runtime without its DevTools inspector proxy, which
# leaks a socket and memory per streamed chunk (see scripts/serve.mjs).
exec node scripts/serve.mjs --config .gsv/wrangler.dev.toml --config .gsv/discord.dev.toml \
  --config .gsv/whatsapp.dev.toml --config .gsv/telegram.dev.toml --config .gsv/whatsapp-web.dev.toml \
  --expose "gsv-channel-whatsapp=$WHATSAPP_PORT" --expose "gsv-channel-telegram=$TELEGRAM_PORT" \
  --ip 127.0.0.1 --port "$PORT" --persist-to .gsv/state
