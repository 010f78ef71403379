#!/usr/bin/env bash
# Deploys gsv to your Cloudflare account in one go: the R2 bucket, the
# gateway Worker and the Discord, WhatsApp and Telegram channel Workers, each with
# its secrets, then points the gsv CLI at the deployed gateway. Safe to run
# again: the bucket is created only when missing, the auth token and
# WhatsApp's webhook verify token are generated once (kept in
# .gsv/deploy.env, mode 0600) and reused unless --rotate-token.
#
#   npm run deploy                      # deploy (wrangler asks you to log in once)
#   npm run deploy:dry-run              # build and bundle the Workers, check bindings and sizes; no account needed
#   npm run deploy:dry-run -- --no-build   # the same on the Workers already built
#   npm run deploy -- --rotate-token
# (`npm run deploy` is `bash scripts/deploy.sh`; either works.)
#
# Optional environment: DISCORD_BOT_TOKEN (stored as the channel's secret);
# WHATSAPP_APP_SECRET, WHATSAPP_ACCESS_TOKEN (stored as the WhatsApp
# channel's secrets) and WHATSAPP_PHONE_NUMBER_ID (its default number; see
# channels/whatsapp/README.md); TELEGRAM_BOT_TOKEN (the Telegram channel's
# secret) and TELEGRAM_PUBLIC_URL (its webhook origin; default: its
# workers.dev URL, beside the gateway's); ANTHROPIC_API_KEY / OPENAI_API_KEY (stored
# in the gateway's config through the CLI once it is deployed); WRANGLER
# (the wrangler to run), GSV (the gsv CLI to configure; default: gsv on PATH).
set -euo pipefail
cd "$(dirname "$0")/.."
say() { printf '\033[1m[deploy]\033[0m %s\n' "$*" >&2; }

DRY_RUN=0
ROTATE=0
BUILD=1
for arg in "$@"; do
  case "$arg" in
    --dry-run) DRY_RUN=1 ;;
    --rotate-token) ROTATE=1 ;;
    --no-build) BUILD=0 ;;
    *) say "unknown option $arg"; exit 2 ;;
  esac
done

export WRANGLER_SEND_METRICS=false
if [ -z "${WRANGLER:-}" ]; then
  bash scripts/setup.sh
  WRANGLER="$PWD/node_modules/.bin/wrangler"
fi
BUCKET=gsv-storage
# Workers Free allows 3 MB (gzipped) per Worker.
LIMIT_BYTES=$((3 * 1024 * 1024))

# The service bindings must name the Workers this script deploys.
CHANNELS="discord whatsapp telegram whatsapp-web"
check_bindings() {
  grep -q '^name = "gsv"$' wrangler.toml
  for ch in $CHANNELS; do
    grep -A2 '^\[\[services\]\]' wrangler.toml | grep -q "service = \"gsv-channel-$ch\""
    grep -q "^name = \"gsv-channel-$ch\"$" "channels/$ch/wrangler.toml"
    grep -A2 '^\[\[services\]\]' "channels/$ch/wrangler.toml" | grep -q 'service = "gsv"'
  done
}
if ! check_bindings; then
  say "the service bindings in wrangler.toml and channels/*/wrangler.toml do not name gsv and gsv-channel-{discord,whatsapp,telegram,whatsapp-web}"
  exit 1
fi

if [ "$DRY_RUN" = 1 ]; then
  out="$PWD/.gsv/dist"
  rm -rf "$out"; mkdir -p "$out"
  if [ "$BUILD" = 1 ]; then
    say "building the Workers"
    bash scripts/build-worker.sh >/dev/null
    bash scripts/build-web.sh
    for ch in $CHANNELS; do bash "channels/$ch/build.sh" >/dev/null; done
  fi
  # Bundled from the built output, as deployed (the configs' [build]
  # would only build again).
  bash scripts/dev-config.sh > "$out/gateway.toml"
  for ch in $CHANNELS; do bash scripts/dev-config.sh "channels/$ch" > "$out/$ch.toml"; done
  for worker in gateway $CHANNELS; do
    say "bundling $worker"
    "$WRANGLER" deploy --dry-run --config "$out/$worker.toml" --outdir "$out/$worker" >&2
  done
  for worker in gateway $CHANNELS; do
    bytes=$(find "$out/$worker" -type f -exec cat {} + | gzip -9 | wc -c)
    verdict=ok
    [ "$bytes" -le "$LIMIT_BYTES" ] || verdict="over the 3 MB Workers Free limit"
    printf '%s %d bytes gzipped (%s)\n' "$worker" "$bytes" "$verdict"
    [ "$verdict" = ok ] || exit 1
  done
  say "bindings check out: gsv ↔ gsv-channel-discord, gsv-channel-whatsapp, gsv-channel-telegram, gsv-channel-whatsapp-web, R2 $BUCKET"
  exit 0
fi

mkdir -p .gsv
if [ "$ROTATE" = 1 ] || ! grep -qs '^GSV_AUTH_TOKEN=' .gsv/deploy.env; then
  token="$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')"
  (umask 077; echo "GSV_AUTH_TOKEN=$token" > .gsv/deploy.env)
  say "generated a new auth token into .gsv/deploy.env"
fi
token="$(grep '^GSV_AUTH_TOKEN=' .gsv/deploy.env | tail -n1 | cut -d= -f2-)"
key="$(printf '%s' "$token" | node scripts/channel-key.mjs)"
# What Meta's webhook subscription presents; pasted into the Meta app.
if [ "$ROTATE" = 1 ] || ! grep -qs '^WHATSAPP_VERIFY_TOKEN=' .gsv/deploy.env; then
  verify="$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
  grep -v '^WHATSAPP_VERIFY_TOKEN=' .gsv/deploy.env > .gsv/deploy.env.new || true
  (umask 077; { cat .gsv/deploy.env.new; echo "WHATSAPP_VERIFY_TOKEN=$verify"; } > .gsv/deploy.env)
  rm -f .gsv/deploy.env.new
fi
verify="$(grep '^WHATSAPP_VERIFY_TOKEN=' .gsv/deploy.env | tail -n1 | cut -d= -f2-)"

if "$WRANGLER" r2 bucket list 2>/dev/null | grep -q "name:[[:space:]]*$BUCKET\$"; then
  say "R2 bucket $BUCKET exists"
else
  say "creating R2 bucket $BUCKET"
  "$WRANGLER" r2 bucket create "$BUCKET" >&2
fi

say "deploying the gateway (gsv)"
gateway_out="$("$WRANGLER" deploy 2>&1 | tee /dev/stderr)"
url="$(printf '%s\n' "$gateway_out" | grep -oE 'https://[a-zA-Z0-9.-]+\.workers\.dev' | head -n1 || true)"
printf '%s' "$token" | "$WRANGLER" secret put GSV_AUTH_TOKEN >&2

say "deploying the Discord channel (gsv-channel-discord)"
(
  cd channels/discord
  "$WRANGLER" deploy >&2
  printf '%s' "$key" | "$WRANGLER" secret put GSV_CHANNEL_KEY >&2
  if [ -n "${DISCORD_BOT_TOKEN:-}" ]; then
    printf '%s' "$DISCORD_BOT_TOKEN" | "$WRANGLER" secret put DISCORD_BOT_TOKEN >&2
  fi
)

say "deploying the WhatsApp channel (gsv-channel-whatsapp)"
whatsapp_out="$(
  cd channels/whatsapp
  if [ -n "${WHATSAPP_PHONE_NUMBER_ID:-}" ]; then
    "$WRANGLER" deploy --var "WHATSAPP_PHONE_NUMBER_ID:$WHATSAPP_PHONE_NUMBER_ID" 2>&1 | tee /dev/stderr
  else
    "$WRANGLER" deploy 2>&1 | tee /dev/stderr
  fi
  printf '%s' "$key" | "$WRANGLER" secret put GSV_CHANNEL_KEY >&2
  printf '%s' "$verify" | "$WRANGLER" secret put WHATSAPP_VERIFY_TOKEN >&2
  for name in WHATSAPP_APP_SECRET WHATSAPP_ACCESS_TOKEN; do
    if [ -n "${!name:-}" ]; then
      printf '%s' "${!name}" | "$WRANGLER" secret put "$name" >&2
    fi
  done
)"
whatsapp_url="$(printf '%s\n' "$whatsapp_out" | grep -oE 'https://[a-zA-Z0-9.-]+\.workers\.dev' | head -n1 || true)"

say "deploying the Telegram channel (gsv-channel-telegram)"
# Telegram posts updates to the Worker's webhook, which it sets itself at
# `gsv channel start telegram` from TELEGRAM_PUBLIC_URL: its workers.dev
# URL, on the gateway's subdomain. Without one, accounts long-poll.
telegram_url="${TELEGRAM_PUBLIC_URL:-}"
case "$url" in
  https://gsv.*.workers.dev) [ -n "$telegram_url" ] || telegram_url="https://gsv-channel-telegram.${url#https://gsv.}" ;;
esac
(
  cd channels/telegram
  if [ -n "$telegram_url" ]; then
    "$WRANGLER" deploy --var "TELEGRAM_PUBLIC_URL:$telegram_url" >&2
  else
    "$WRANGLER" deploy >&2
  fi
  printf '%s' "$key" | "$WRANGLER" secret put GSV_CHANNEL_KEY >&2
  if [ -n "${TELEGRAM_BOT_TOKEN:-}" ]; then
    printf '%s' "$TELEGRAM_BOT_TOKEN" | "$WRANGLER" secret put TELEGRAM_BOT_TOKEN >&2
  fi
)

say "deploying the WhatsApp Web channel (gsv-channel-whatsapp-web)"
# No public route: each linked number's object opens its own socket to
# WhatsApp. Linking is `gsv channel login whatsapp-web` (a QR code).
(
  cd channels/whatsapp-web
  "$WRANGLER" deploy >&2
  printf '%s' "$key" | "$WRANGLER" secret put GSV_CHANNEL_KEY >&2
)

GSV="${GSV:-gsv}"
if [ -n "$url" ] && command -v "$GSV" >/dev/null; then
  ws="${url/https:/wss:}/ws"
  "$GSV" local-config set gateway.url "$ws" >/dev/null
  "$GSV" local-config set gateway.token "$token" >/dev/null
  say "the gsv CLI now talks to $ws"
  if [ -n "${ANTHROPIC_API_KEY:-}" ]; then
    "$GSV" config set apiKeys.anthropic "$ANTHROPIC_API_KEY" >/dev/null
  fi
  if [ -n "${OPENAI_API_KEY:-}" ]; then
    "$GSV" config set apiKeys.openai "$OPENAI_API_KEY" >/dev/null
  fi
fi
echo "gateway: ${url:-(see the wrangler output above)}"
echo "channel: gsv-channel-discord (no public route; reached through the gateway's binding)"
if [ -n "${DISCORD_BOT_TOKEN:-}" ]; then
  echo "next: gsv channel start discord"
else
  echo "next: gsv channel start discord --bot-token <token>   (or DISCORD_BOT_TOKEN=… npm run deploy)"
fi
echo "whatsapp: ${whatsapp_url:-https://gsv-channel-whatsapp.<subdomain>.workers.dev}/webhook (Meta's callback URL; its verify token is WHATSAPP_VERIFY_TOKEN in .gsv/deploy.env)"
if [ -n "${WHATSAPP_APP_SECRET:-}" ] && [ -n "${WHATSAPP_ACCESS_TOKEN:-}" ] && [ -n "${WHATSAPP_PHONE_NUMBER_ID:-}" ]; then
  echo "next: gsv channel start whatsapp"
else
  echo "next: WHATSAPP_APP_SECRET=… WHATSAPP_ACCESS_TOKEN=… WHATSAPP_PHONE_NUMBER_ID=… npm run deploy, then gsv channel start whatsapp (channels/whatsapp/README.md)"
fi
if [ -n "$telegram_url" ]; then
  echo "telegram: $telegram_url/webhook/<account> (set with Telegram at start, with a secret of its own)"
else
  echo "telegram: no public URL (TELEGRAM_PUBLIC_URL): accounts long-poll Telegram"
fi
if [ -n "${TELEGRAM_BOT_TOKEN:-}" ]; then
  echo "next: gsv channel start telegram"
else
  echo "next: gsv channel start telegram --bot-token <token from @BotFather>   (or TELEGRAM_BOT_TOKEN=… npm run deploy)"
fi
echo "whatsapp-web: your own number, linked as a device: gsv channel login whatsapp-web (channels/whatsapp-web/README.md)"
