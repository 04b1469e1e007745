"""Shared test configuration: Hypothesis profiles (``ci`` is derandomized and is the default under CI)."""

import os
import re

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", derandomize=True, max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", max_examples=100, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


_ADDRESS_IN_ID = re.compile(r" at 0x[0-9a-fA-F]+")


def pytest_collection_modifyitems(config, items):
    """Test ids must be the same in every process: the default run uses pytest-xdist, whose workers
    each collect the suite and refuse to start when their lists differ. A parameter whose id is a
    default repr (``<function <lambda> at 0x7f...>``) differs from process to process."""
    unstable = [item.nodeid for item in items if _ADDRESS_IN_ID.search(item.nodeid)]
    if unstable:
        raise pytest.UsageError(
            "test ids with a memory address (give the parametrize call ids=...): " + ", ".join(unstable[:5])
        )


@pytest.fixture(autouse=True, scope="module")
def _module_mpmath_precision(request):
    """A module's ``MPMATH_DPS`` is the mpmath working precision of its tests, set before its first
    test and restored after its last (module scope: Hypothesis refuses function-scoped fixtures). Setting ``mpmath.mp.dps`` at import instead would leak: every worker imports
    every module at collection, so the last module imported would fix the precision of all the others
    (tests/unit/test_test_hygiene.py refuses that)."""
    dps = getattr(request.module, "MPMATH_DPS", None)
    if dps is None:
        yield
        return
    import mpmath

    with mpmath.workdps(dps):
        yield
