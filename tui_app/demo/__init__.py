"""The bundled demo: a scripted model working on a copy of a small sample project.
May import the scripted provider's script format only."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

DEMO_DIR = Path(__file__).parent


def demo_script_path() -> Path:
    return DEMO_DIR / "script.json"


def sample_project_path() -> Path:
    return DEMO_DIR / "sample_project"


def copy_sample_project(parent: str | None = None) -> Path:
    """A fresh copy of the sample project (the demo never touches the bundled original)."""
    target = Path(tempfile.mkdtemp(prefix="vigil-demo-", dir=parent))
    project = target / "sample_project"
    shutil.copytree(sample_project_path(), project)
    return project

#: the user's first prompt in the demo
DEMO_PROMPT = "The tests of this project fail. Find out why and fix it."
