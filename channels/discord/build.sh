#!/usr/bin/env bash
# Builds the Discord channel Worker to channels/discord/build/ (see
# scripts/build-channel.sh).
exec bash "$(dirname "$0")/../../scripts/build-channel.sh" "$(dirname "$0")" "$@"
