#!/usr/bin/env bash
# Builds the WhatsApp Web channel Worker to channels/whatsapp-web/build/
# (see scripts/build-channel.sh): the deployable build, which trusts only
# WhatsApp's root key. `build.sh --test-double` builds to build-test/
# instead, with the `test-double-trust` feature: the build the test
# harness runs against its local WhatsApp Web server. Never deploy it.
set -euo pipefail
dir="$(cd "$(dirname "$0")" && pwd)"
if [ "${1:-}" = "--test-double" ]; then
  shift
  exec bash "$dir/../../scripts/build-channel.sh" "$dir" --out-dir build-test "$@" "$dir" --features test-double-trust
fi
exec bash "$dir/../../scripts/build-channel.sh" "$dir" "$@"
