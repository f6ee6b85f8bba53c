#!/usr/bin/env bash
# A hook that ignores SIGTERM (only SIGKILL ends it), with a child that ignores it too.
trap '' TERM
cat > /dev/null
bash -c "trap '' TERM; sleep 300" &
echo "$$ $!" > "$1"
while true; do sleep 1; done
