"""Dong et al. (2025) RDP bounds for Gaussian k-out-of-t random allocation.

LABEL: these formulas are transcribed from the authors' code as used by the random-allocation
repository (RDP_DCO.py; notes/random-allocation.md §3.10), not from a statement we could check in
either paper. They are therefore returned with ``exact`` all False and are NOT used by the
certification method; they serve for comparison, and the remove formula is checked against the exact
Thm 4.8 value at α = 2, where they must agree (for k = 1 both are ln(1 + (e^{Δ²/σ²} − 1)/t)).

Remove (no 1/(α−1) factor, as in the code):
    ρ_rem(α) = ln Σ_{i=0}^{k} [C(k,i) C(t−k, k−i) / C(t,k)] · e^{i·α·Δ²/(2σ²)}.
Add:
    ρ_add(α) = α k²Δ²/(2σ² t) + α k(t−k)Δ²/(2σ² t(α−1)) − (t/(2(α−1)))·ln(1 + α(e^{k(t−k)Δ²/(σ² t²)} − 1)).
Both are per epoch; E epochs multiply by E.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from flint import arb

from verifier._directed import arb_bound, with_precision
from verifier._types import Direction, Side
from verifier._validation import check_integer
from verifier.errors import InvalidArgument
from verifier.pairs import Gaussian
from verifier.rdp.curve import RdpCurve, check_orders

__all__ = ["dong_curve", "CITATION"]

CITATION = "Dong et al. 2025, Thm 3.1, formulas as implemented in the authors' code (RDP_DCO.py); unverified"


def _log_binomial(n: int, r: int) -> arb:
    return arb(n + 1).lgamma() - arb(r + 1).lgamma() - arb(n - r + 1).lgamma()


def dong_curve(pair: Gaussian, steps: int, orders: npt.ArrayLike, direction: Direction, k: int = 1, epochs: int = 1) -> RdpCurve:
    """Dong et al.'s RDP values for Gaussian k-out-of-t allocation (see the module docstring)."""
    if not isinstance(pair, Gaussian):
        raise InvalidArgument("pair", pair, "Dong et al.'s bounds are stated for the Gaussian mechanism only")
    grid = check_orders(orders)
    t = check_integer("steps", steps, minimum=1)
    kk = check_integer("k", k, minimum=1, maximum=t)
    e = check_integer("epochs", epochs, minimum=1)
    values = np.empty(len(grid))
    with with_precision():
        rho = arb(pair.sensitivity) ** 2 / (2 * arb(pair.sigma) ** 2)
        for n, alpha in enumerate(grid):
            a = arb(float(alpha))
            if direction is Direction.REMOVE:
                total = arb(0)
                for i in range(max(0, 2 * kk - t), kk + 1):
                    log_w = _log_binomial(kk, i) + _log_binomial(t - kk, kk - i) - _log_binomial(t, kk)
                    total += (log_w + i * a * rho).exp()
                value = total.log()
            else:
                value = (
                    a * kk * kk * rho / t
                    + a * kk * (t - kk) * rho / (t * (a - 1))
                    - (arb(t) / (2 * (a - 1))) * (1 + a * ((2 * rho * kk * (t - kk) / (arb(t) * t)).exp() - 1)).log()
                )
            values[n] = max(0.0, arb_bound(value * e, Side.UPPER))
    return RdpCurve(grid, values, np.zeros(len(grid), dtype=bool), direction, CITATION)
