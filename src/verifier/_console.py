"""The ``verifier`` console script and ``python -m verifier``: import the CLI inside the exit-status
contract (issue 19). Importing :mod:`verifier.cli` loads the compiled kernels (``src/fast``) and the
numerical dependencies; if one is missing or fails to load, Python's own traceback status would be
1, which reads as VIOLATED. Here it is a defect (4) with one line naming what failed to import.
"""

from __future__ import annotations

import sys
from typing import NoReturn

__all__ = ["run"]

DEFECT = 4


def run() -> NoReturn:
    """Import :func:`verifier.cli.main` and exit with its status; exit 4 if the import fails."""
    try:
        from verifier.cli import main
    except ImportError as error:
        missing = error.name or "a module"
        sys.stderr.write(
            f"verifier: DEFECT: cannot import {missing} ({error}); a compiled kernel or a dependency is "
            "missing or broken: reinstall with `pip install .` (the build compiles the kernels in src/fast)\n"
        )
        raise SystemExit(DEFECT) from None
    raise SystemExit(main())
