#!/usr/bin/env bash
# A hook that never answers: it starts a child in its process group, records both pids, and sleeps.
cat > /dev/null
sleep 300 &
echo "$$ $!" > "$1"
sleep 300
