"""Make ``verifier.reference`` importable from a source checkout that is not installed.

1. If ``import verifier.reference`` fails, put ``<repo>/src`` on ``sys.path`` and retry.
2. ``verifier.reference`` imports nothing else from ``verifier``; if the package ``__init__`` still
   fails (a sibling module being written, or an optional compiled dependency missing), load the
   reference subpackage under a bare ``verifier`` package object so these tests still run.  This
   only happens when the real package cannot be imported at all.
"""

import importlib
import sys
import types
from pathlib import Path

_SRC = Path(__file__).resolve().parents[2] / "src"

try:
    import verifier.reference  # noqa: F401
except ImportError:
    if str(_SRC) not in sys.path:
        sys.path.insert(0, str(_SRC))
    for name in [m for m in sys.modules if m == "verifier" or m.startswith("verifier.")]:
        del sys.modules[name]
    try:
        importlib.import_module("verifier.reference")
    except ImportError:
        for name in [m for m in sys.modules if m == "verifier" or m.startswith("verifier.")]:
            del sys.modules[name]
        package = types.ModuleType("verifier")
        package.__path__ = [str(_SRC / "verifier")]
        sys.modules["verifier"] = package
        importlib.import_module("verifier.reference")
