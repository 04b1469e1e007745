"""The test modules leave global state alone at import: no module sets ``mpmath.mp.dps`` (or
``mpmath.mp.prec``) at top level, where it would fix the precision of every module collected before
it in the same worker; a module declares ``MPMATH_DPS`` instead and tests/conftest.py applies it."""

import re
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
GLOBAL_PRECISION = re.compile(r"^(?:mpmath\.)?mp\.(?:dps|prec)\s*=", re.M)


def test_no_module_sets_mpmath_precision_at_import():
    offenders = [
        str(path.relative_to(TESTS))
        for path in TESTS.rglob("*.py")
        if GLOBAL_PRECISION.search(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []


def test_the_pattern_catches_the_old_form():
    assert GLOBAL_PRECISION.search("import mpmath\nmpmath.mp.dps = 40\n")
    assert GLOBAL_PRECISION.search("from mpmath import mp\nmp.prec = 200\n")
    assert not GLOBAL_PRECISION.search("def f():\n    mpmath.mp.dps = 40\n")
