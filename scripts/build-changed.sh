#!/usr/bin/env bash
# Runs a build only when its inputs changed since it last succeeded: a
# second `scripts/dev.sh` with nothing edited serves in seconds instead of
# rebuilding and re-optimizing every Worker.
#
#   build-changed.sh NAME OUTPUT INPUT... -- COMMAND...
#
# The inputs (files or directories) are the files git tracks or would
# track under them (ignored files — build outputs, node_modules — are not
# inputs), with their contents: their hash, with COMMAND itself, is kept
# in .gsv/built/NAME after COMMAND succeeds. COMMAND runs when that hash
# differs, or OUTPUT is missing. Prints "NAME: up to date" or runs it.
set -euo pipefail
cd "$(dirname "$0")/.."
name="$1" output="$2"
shift 2
inputs=()
while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do inputs+=("$1"); shift; done
[ "${1:-}" = "--" ] || { echo "usage: build-changed.sh NAME OUTPUT INPUT... -- COMMAND..." >&2; exit 2; }
shift
# Outside a git checkout there is nothing to compare: always build.
git rev-parse --is-inside-work-tree >/dev/null 2>&1 || exec "$@"

# Tracked and untracked-but-not-ignored files, hashed by content (git
# hash-object reads them as they are now, edits included).
hash_inputs() {
  local files
  files="$(git ls-files -z --cached --others --exclude-standard -- "${inputs[@]}" \
    | while IFS= read -r -d '' f; do [ -f "$f" ] && printf '%s\n' "$f"; done | LC_ALL=C sort)"
  { printf '%s\n' "$*" "$files"; [ -z "$files" ] || printf '%s\n' "$files" | git hash-object --stdin-paths; } \
    | git hash-object --stdin
}

stamp=".gsv/built/$name"
want="$(hash_inputs "$@")"
if [ -e "$output" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  echo "$name: up to date"
  exit 0
fi
rm -f "$stamp"
"$@"
mkdir -p .gsv/built
echo "$want" > "$stamp"
