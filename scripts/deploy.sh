#!/usr/bin/env bash
# Deploys gsv to your Cloudflare account in one go: the R2 bucket, the
# gateway Worker and the Discord channel Worker, each with its secrets,
# then points the gsv CLI at the deployed gateway. Safe to run again: the
# bucket is created only when missing, the auth token is generated once
# (kept in .gsv/deploy.env, mode 0600) and reused unless --rotate-token.
#
#   bash scripts/deploy.sh              # deploy (wrangler asks you to log in once)
#   bash scripts/deploy.sh --dry-run    # build and bundle both Workers, check bindings and sizes; no account needed
#   bash scripts/deploy.sh --dry-run --no-build   # the same on the Workers already built
#   bash scripts/deploy.sh --rotate-token
#
# Optional environment: DISCORD_BOT_TOKEN (stored as the channel's secret),
# ANTHROPIC_API_KEY / OPENAI_API_KEY (stored in the gateway's config through
# the CLI once it is deployed), WRANGLER (the wrangler to run), GSV (the gsv
# CLI to configure; default: gsv on PATH).
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
check_bindings() {
  grep -q '^name = "gsv"$' wrangler.toml
  grep -A2 '^\[\[services\]\]' wrangler.toml | grep -q 'service = "gsv-channel-discord"'
  grep -q '^name = "gsv-channel-discord"$' channels/discord/wrangler.toml
  grep -A2 '^\[\[services\]\]' channels/discord/wrangler.toml | grep -q 'service = "gsv"'
}
if ! check_bindings; then
  say "the service bindings in wrangler.toml and channels/discord/wrangler.toml do not name gsv and gsv-channel-discord"
  exit 1
fi

if [ "$DRY_RUN" = 1 ]; then
  out="$PWD/.gsv/dist"
  rm -rf "$out"; mkdir -p "$out"
  if [ "$BUILD" = 1 ]; then
    say "building both Workers"
    bash scripts/build-worker.sh >/dev/null
    bash channels/discord/build.sh >/dev/null
  fi
  # Bundled from the built output, as deployed (the configs' [build]
  # would only build again).
  bash scripts/dev-config.sh > "$out/gateway.toml"
  bash scripts/dev-config.sh channels/discord > "$out/discord.toml"
  for worker in gateway discord; do
    say "bundling $worker"
    "$WRANGLER" deploy --dry-run --config "$out/$worker.toml" --outdir "$out/$worker" >&2
  done
  for worker in gateway discord; do
    bytes=$(find "$out/$worker" -type f -exec cat {} + | gzip -9 | wc -c)
    verdict=ok
    [ "$bytes" -le "$LIMIT_BYTES" ] || verdict="over the 3 MB Workers Free limit"
    printf '%s %d bytes gzipped (%s)\n' "$worker" "$bytes" "$verdict"
    [ "$verdict" = ok ] || exit 1
  done
  say "bindings check out: gsv ↔ gsv-channel-discord, R2 $BUCKET"
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
  echo "next: gsv channel start discord --bot-token <token>   (or DISCORD_BOT_TOKEN=… bash scripts/deploy.sh)"
fi
