"""The scripts of tools/ as modules for the tests: tools/ is on their import path, as when they run."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

TOOLS = Path(__file__).resolve().parent.parent / "tools"


def tool_module(name: str) -> ModuleType:
    """tools/<name>.py, imported with the other scripts of tools/ importable beside it."""
    if str(TOOLS) not in sys.path:
        sys.path.insert(0, str(TOOLS))
    return importlib.import_module(name)
