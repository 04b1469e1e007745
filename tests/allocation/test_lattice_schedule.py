"""The lattice schedule of the partial sums (issue 17: random allocation at ε ≈ 1, small σ).

A sum of m ratios was put on a lattice √m times finer than the base law's. For a heavy-tailed ratio
(X = P/Q under Q has variance e^{1/σ²} − 1, ≈ 10³ at σ = 0.38) the sums concentrate much later than
that, so the top levels resolved their bodies ~20 times finer than the base law and the work per
level grew like the number of summands. The schedule now also caps the lattice at the one that puts
twice as many steps across the partial sum's body as across the base law's.
"""

from __future__ import annotations

import numpy as np
import pytest

import verifier.pld.geometric as geometric
from verifier._types import Direction, Dominance
from verifier.pairs import Gaussian
from verifier.pld.allocation import convex_allocation

BASE = 3  # the base lattice exponent the allocation-pld method starts from at σ < 1


def _laws(sigma: float, t: int) -> dict[Dominance, object]:
    return {d: convex_allocation(Gaussian(sigma), t, d, step_exponent=BASE, tail_budget=1e-15) for d in Dominance}


def test_lattice_follows_the_body_not_the_summand_count(monkeypatch):
    """t = 10⁵, σ = 0.42 (ε ≈ 1.25 at δ = 1e-5): the last lattice is 2^-10, not the summand-count rule's
    2^-(3 + ⌈log2(10⁵)/2⌉) = 2^-12, and no convolution is handed more than 6000 atoms per input (4077
    measured; the count rule: up to 18000, with ~5× the pair visits). A cost proxy, not a time:
    catches a schedule that again refines with √m past the body."""
    sizes = []
    original = geometric.convolve_convex

    def recording(a, b, tail, **kw):
        sizes.append(max(np.count_nonzero(a.probs), np.count_nonzero(b.probs)))
        return original(a, b, tail, **kw)

    monkeypatch.setattr(geometric, "convolve_convex", recording)
    law = convex_allocation(Gaussian(0.42), 10**5, Dominance.DOMINATING, step_exponent=BASE, tail_budget=1e-15)
    assert law.law.step_exponent <= BASE + 7
    assert max(sizes) <= 6000


@pytest.mark.parametrize("direction", list(Direction))
def test_coarser_schedule_overlaps_and_nearly_matches_the_count_schedule(monkeypatch, direction):
    """t = 10⁴, σ = 0.5, δ = 1e-5: the brackets of both schedules are rigorous, so they intersect (the
    count schedule is the one tested against exact values and Monte Carlo in this folder), and the
    body schedule's is at most 1.5× as wide (measured: 1.10× ADD, 1.00× REMOVE). Catches a
    schedule that coarsens so far that the bracket loses its use, or spreads on the wrong side."""
    body = _laws(0.5, 10**4)
    # a body predicted to be vanishingly narrow makes the body rule infinitely fine: the count rule
    monkeypatch.setattr(geometric, "body_width", lambda law: 1e-300)
    count = _laws(0.5, 10**4)
    new = (body[Dominance.DOMINATED].epsilon(1e-5, direction), body[Dominance.DOMINATING].epsilon(1e-5, direction))
    old = (count[Dominance.DOMINATED].epsilon(1e-5, direction), count[Dominance.DOMINATING].epsilon(1e-5, direction))
    assert count[Dominance.DOMINATING].law.step_exponent > body[Dominance.DOMINATING].law.step_exponent
    assert new[0] <= old[1] and old[0] <= new[1]
    assert new[1] - new[0] <= 1.5 * (old[1] - old[0])


def test_few_atom_ratio_keeps_the_count_schedule_and_brackets_the_binomial_value():
    """Randomized response ε0 = 5, t = 10⁵, δ = 1e-6, REMOVE: X = P/Q under Q is e^{ε0} with probability
    1/(1 + e^{ε0}), else e^{−ε0}, so S = N·e^{ε0} + (t − N)·e^{−ε0} with N binomial and δ(ε) =
    E[(S/t − e^ε)_+] is a finite sum (scipy's binomial pmf). Sums of a two-atom ratio are separated
    atoms, where the lattice error is first order: the schedule stays √m (last lattice 2^-(3 + 9)) and
    the bracket contains the binomial value and is <= 0.05% wide (measured 0.007%; the body schedule
    gave 0.24%). Catches the body schedule applied to few-atom ratios."""
    from scipy.optimize import brentq
    from scipy.stats import binom

    from verifier.pairs import RandomizedResponse

    eps0, t, delta = 5.0, 10**5, 1e-6
    n = np.arange(t + 1)
    pmf = binom.pmf(n, t, 1.0 / (1.0 + np.exp(eps0)))
    mean_ratio = (n * np.exp(eps0) + (t - n) * np.exp(-eps0)) / t
    exact = brentq(lambda e: float(np.sum(pmf * np.maximum(mean_ratio - np.exp(e), 0.0))) - delta, 0.0, 5.0, xtol=1e-13)
    laws = {d: convex_allocation(RandomizedResponse(eps0), t, d, step_exponent=BASE, tail_budget=1e-15) for d in Dominance}
    assert laws[Dominance.DOMINATING].law.step_exponent == BASE + 9
    lower = laws[Dominance.DOMINATED].epsilon(delta, Direction.REMOVE)
    upper = laws[Dominance.DOMINATING].epsilon(delta, Direction.REMOVE)
    assert lower <= exact <= upper
    assert (upper - lower) / upper <= 5e-4
