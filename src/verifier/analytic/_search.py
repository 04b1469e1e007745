"""Root finding for ε from a one-sided δ(ε) bound, with the post-condition checked.

A profile δ(ε) is non-increasing. If an UPPER bound u(ε) satisfies u(ε) ≤ δ at some ε, then
δ(ε) ≤ δ there and ε(δ) ≤ ε: the returned point is one where this was *evaluated*, whether or not
u is monotone. If a LOWER bound l(ε) satisfies l(ε) > δ, then δ(ε′) > δ for every ε′ ≤ ε and
ε(δ) ≥ ε. Bisection stops at an absolute width; tightness only depends on it.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

from verifier.errors import NotApplicable

__all__ = ["smallest_passing", "EPSILON_TOLERANCE"]

#: Absolute width (in ε) at which bisection stops: far below the accuracy of the Poisson profiles
#: the analytic bounds rest on, and only a matter of tightness (the returned end is verified).
EPSILON_TOLERANCE = 1e-6

#: Largest ε searched; a bound that needs more is reported as not applicable, never as ∞.
EPSILON_CEILING = 1e4


def _grown(x: float) -> float:
    return x + 0.25 + 0.25 * abs(x)


def smallest_passing(passes: Callable[[float], bool], lo: float, hi: float | None = None,
                     tolerance: float = EPSILON_TOLERANCE, *, steps: int | None = None) -> tuple[float, float]:
    """A pair (failing, passing) of points with ``passes(passing)`` evaluated True and
    ``passes(failing)`` False (or ``failing == lo`` when ``lo`` passes), ``passing − failing <= tolerance``,
    or after ``steps`` halvings when given (``tolerance=0``: exactly that many, fewer only where the two
    ends are neighbouring floats, where a further halving would change neither).

    ``hi`` is grown geometrically (by 0.25 + |ε|/4 per step) from ``lo`` when not given, up to
    :data:`EPSILON_CEILING`. The growth is gentle because an upper bound need not be monotone: the
    decomposition ADD bound γ←(ε)·δ_P(ε←) grows again once the Poisson profile reaches a floor (its
    infinite-loss mass), so its passing set can be a bounded interval that doubling would jump over.
    """
    if passes(lo):
        return lo, lo
    if hi is None:
        hi = _grown(lo)
    while not passes(hi):
        lo, hi = hi, _grown(hi)
        if hi > EPSILON_CEILING:
            raise NotApplicable(f"no ε <= {EPSILON_CEILING:g} meets the target (the bound is vacuous here)")
    for _ in itertools.count() if steps is None else range(steps):
        if hi - lo <= tolerance:
            break
        mid = 0.5 * (lo + hi)
        if not (lo < mid < hi) or math.isnan(mid):
            break
        if passes(mid):
            hi = mid
        else:
            lo = mid
    return lo, hi
