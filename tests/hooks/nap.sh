#!/usr/bin/env bash
# A hook that takes $1 seconds and then allows (to show hooks run in parallel).
cat > /dev/null
sleep "$1"
echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}}'
