"""Lets the tests run from a checkout too: ``src`` goes on sys.path when the package is not installed."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

if importlib.util.find_spec("kschedctl_gpu_binpack") is None:
    sys.path.insert(0, str(Path(__file__).parent.parent / "src"))
