"""Hypothesis, the same in every child: derandomized, no example database, no deadline (a child
shares two cores with the others)."""

from __future__ import annotations

from hypothesis import settings

settings.register_profile("mutation", derandomize=True, database=None, deadline=None, print_blob=False)
settings.load_profile("mutation")
