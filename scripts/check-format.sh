#!/bin/sh
# Checks (or, with --fix, applies) the project's C format: .clang-format, 120 columns, with clang-format 14
# (other major versions format differently; the check names the version it needs rather than guessing).
# Usage: scripts/check-format.sh [--fix]
set -eu
cd "$(dirname "$0")/.."
CF=""
for c in clang-format-14 clang-format; do
    if command -v "$c" >/dev/null 2>&1 && "$c" --version | grep -q 'version 14\.'; then CF=$c; break; fi
done
[ -n "$CF" ] || { echo "railscope: check-format needs clang-format 14 (apt-get install clang-format-14)" >&2; exit 2; }
files=$(git ls-files '*.c' '*.h')
if [ "${1:-}" = --fix ]; then
    # twice: a few macro bodies settle only on the second pass
    echo "$files" | xargs "$CF" -i && echo "$files" | xargs "$CF" -i
    exit 0
fi
bad=$(echo "$files" | xargs "$CF" --dry-run -Werror 2>&1 | sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p' | sort -u)
long=$(echo "$files" | xargs awk 'length > 120 { print FILENAME ":" FNR }')
[ -z "$bad$long" ] && { echo "railscope: format ok ($(echo "$files" | wc -l) files)"; exit 0; }
[ -z "$bad" ] || echo "railscope: not clang-formatted (run scripts/check-format.sh --fix):" $bad >&2
[ -z "$long" ] || echo "railscope: lines over 120 columns:" $long >&2
exit 1
