#!/usr/bin/env bash
# Builds the WhatsApp channel Worker to channels/whatsapp/build/ (see
# scripts/build-channel.sh).
exec bash "$(dirname "$0")/../../scripts/build-channel.sh" "$(dirname "$0")" "$@"
