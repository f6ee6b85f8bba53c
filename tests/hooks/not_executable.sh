#!/usr/bin/env bash
# A hook that exits with $1 after writing $2 to stderr (and $3, if given, to stdout).
cat > /dev/null
[ -n "${3:-}" ] && printf '%s\n' "$3"
[ -n "${2:-}" ] && printf '%s\nsecond line\n' "$2" >&2
exit "$1"
