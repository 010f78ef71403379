#!/usr/bin/env bash
# Installs what building and running the gateway needs, idempotently:
# the wasm32 target, worker-build, wasm-bindgen-cli at the exact version in
# Cargo.lock, and the npm packages (wrangler, miniflare, binaryen, esbuild,
# and the web UI's Preact, marked, DOMPurify, TypeScript). With --browser
# (the test command), also Debian's Chromium and its WebDriver, which the
# web UI's tests drive. Everything comes from crates.io, npm and the
# Debian archive; nothing else is downloaded.
set -euo pipefail
cd "$(dirname "$0")/.."
BROWSER=0
for arg in "$@"; do
  case "$arg" in
    --browser) BROWSER=1 ;;
    *) echo "usage: setup.sh [--browser]" >&2; exit 2 ;;
  esac
done

WORKER_BUILD_VERSION=0.8.7
say() { printf '\033[1m[setup]\033[0m %s\n' "$*" >&2; }

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  say "adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi

if ! rustup component list --installed | grep -q '^rustfmt'; then
  say "adding rustfmt (the test command checks formatting)"
  rustup component add rustfmt
fi

if ! rustup component list --installed | grep -q '^clippy'; then
  say "adding clippy (the test command fails on clippy warnings)"
  rustup component add clippy
fi

installed_version() { "$1" --version 2>/dev/null | grep -oE '[0-9]+\.[0-9]+\.[0-9]+' | head -n1; }

if [ "$(installed_version worker-build)" != "$WORKER_BUILD_VERSION" ]; then
  say "installing worker-build $WORKER_BUILD_VERSION"
  cargo install worker-build --version "$WORKER_BUILD_VERSION" --force
fi

BINDGEN_VERSION=$(awk '/^name = "wasm-bindgen"$/ {getline; gsub(/version = |"/, ""); print; exit}' Cargo.lock)
if [ "$(installed_version wasm-bindgen)" != "$BINDGEN_VERSION" ]; then
  say "installing wasm-bindgen-cli $BINDGEN_VERSION (a few minutes the first time)"
  cargo install wasm-bindgen-cli --version "$BINDGEN_VERSION" --force
fi

if [ ! -x node_modules/.bin/wrangler ] || [ package.json -nt node_modules/.package-lock.json ] \
   || { [ -f package-lock.json ] && [ package-lock.json -nt node_modules/.package-lock.json ]; }; then
  say "installing npm packages"
  if [ -f package-lock.json ]; then npm ci --no-audit --no-fund; else npm install --no-audit --no-fund; fi
fi

if [ "$BROWSER" = 1 ] && { ! command -v chromedriver >/dev/null \
     || { [ ! -x /usr/lib/chromium/chromium ] && ! command -v chromium >/dev/null; }; }; then
  if ! command -v apt-get >/dev/null; then
    say "the web UI's tests need Chromium and chromedriver: install them (on Debian: apt-get install chromium chromium-driver)"
    exit 1
  fi
  say "installing Chromium and chromium-driver from Debian (the web UI's tests drive them)"
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q chromium chromium-driver
fi
