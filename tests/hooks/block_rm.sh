#!/usr/bin/env bash
# A PreToolUse hook as users write them: refuse `rm -rf`, let everything else through.
input=$(cat)
command=$(printf '%s' "$input" | python3 -c 'import json,sys; print(json.load(sys.stdin)["tool_input"].get("command", ""))')
case "$command" in
  *"rm -rf"*) echo "rm -rf is not allowed in this project: $command" >&2; exit 2 ;;
esac
exit 0
