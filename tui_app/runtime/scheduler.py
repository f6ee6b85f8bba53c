"""Grouping a batch of calls in model order.

Consecutive calls that may run in parallel form a group (at most `max_concurrency`); any other
call is a group of its own. `Read a, Read b, Edit c, WebFetch d, Bash e, Read f` →
`[a b] [c] [d] [e] [f]`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

DEFAULT_MAX_CONCURRENCY = 10


def max_concurrency_from_env(default: int = DEFAULT_MAX_CONCURRENCY) -> int:
    try:
        value = int(os.environ.get("VIGIL_MAX_TOOL_CONCURRENCY", default))
    except ValueError:
        return default
    return max(1, value)


def plan_groups(parallel: Sequence[bool], max_concurrency: int = DEFAULT_MAX_CONCURRENCY) -> list[list[int]]:
    """`parallel[i]` says whether call i may overlap its neighbours; returns groups of indices."""
    groups: list[list[int]] = []
    current: list[int] = []
    for index, may_overlap in enumerate(parallel):
        if not may_overlap:
            if current:
                groups.append(current)
                current = []
            groups.append([index])
            continue
        current.append(index)
        if len(current) >= max_concurrency:
            groups.append(current)
            current = []
    if current:
        groups.append(current)
    return groups
