"""Tests that need a program a bare machine may lack (tmux, node, bubblewrap …) skip with the
reason, except where `VIGIL_REQUIRE_ALL` is set (CI sets it): there a missing program fails the
test, so CI can never pass by skipping."""

from __future__ import annotations

import os
import shutil

import pytest


def missing(program: str) -> str | None:
    return None if shutil.which(program) else f"{program} is not installed"


def require(reason: str | None) -> None:
    """Skip (or, under CI, fail) when `reason` says something is missing."""
    if reason is None:
        return
    if os.environ.get("VIGIL_REQUIRE_ALL"):
        pytest.fail(f"required here (VIGIL_REQUIRE_ALL): {reason}")
    pytest.skip(reason)


def need_program(program: str) -> None:
    require(missing(program))

