#!/usr/bin/env python3
"""A hook that answers: prints argv[1] on stdout, argv[3] on stderr, exits with argv[2]."""
import sys

sys.stdin.read()
if len(sys.argv) > 1 and sys.argv[1]:
    print(sys.argv[1])
if len(sys.argv) > 3:
    print(sys.argv[3], file=sys.stderr)
sys.exit(int(sys.argv[2]) if len(sys.argv) > 2 else 0)
