#!/usr/bin/env bash
# Builds the Telegram channel Worker to channels/telegram/build/ (see
# scripts/build-channel.sh).
exec bash "$(dirname "$0")/../../scripts/build-channel.sh" "$(dirname "$0")" "$@"
