"""Running catalogue properties against an accountant with Hypothesis.

:func:`run_property` draws cases the accountant accepts, checks the property on each, and on a
violation lets Hypothesis shrink to the minimal failing case; the :class:`PropertyFailure` raised
for that case carries the finding (its message is the report).
"""

from __future__ import annotations

from verifier.properties.accountant import Accountant
from verifier.properties.catalogue import Property
from verifier.strategies import cases

__all__ = ["run_property", "DEFAULT_EXAMPLES"]

#: Examples per property: each asks verifier for a rigorous bracket (tenths of a second), so a
#: catalogue run stays within a minute or two.
DEFAULT_EXAMPLES = 20


def run_property(prop: Property, accountant: Accountant, *, max_examples: int = DEFAULT_EXAMPLES, derandomize: bool = True) -> None:
    """Check ``prop`` on up to ``max_examples`` cases; raise :class:`PropertyFailure` for the
    shrunk counterexample. With ``derandomize`` (default) the run is reproducible."""
    from hypothesis import HealthCheck, given, settings

    @settings(
        max_examples=max_examples,
        deadline=None,
        derandomize=derandomize,
        database=None,
        suppress_health_check=list(HealthCheck),
        print_blob=False,
    )
    @given(cases(accountant, prop.kinds))
    def check(case):
        prop.check(accountant, case)

    check()
