"""Upper-tail thinning of the ratio-sum laws (issue 17: random allocation at small σ, where the
unthinned tails made every level's convolution grow like the number of summands)."""

from __future__ import annotations

import numpy as np
import pytest

from verifier._types import Direction, Dominance
from verifier.pairs import Gaussian
from verifier.pld.geometric import MomentLaw, thinned


def _heavy_law(dominance: Dominance) -> MomentLaw:
    """A lognormal-like law with a long upper tail on the lattice 2^-10: masses ∝ exp(−(ln x)²/(2·0.3²))
    in the body and 1e-4·x^-3 beyond (the shape of a sum of ratios under Q). DOMINATED atoms sit inside
    their cells (at 0.3 of the way), DOMINATING atoms on the lattice points."""
    k, offset, n = 10, -500, 12000
    labels = offset + np.arange(n)
    ln_x = labels * 2.0**-k
    probs = np.where(ln_x < 0.6, np.exp(-(ln_x**2) / (2 * 0.09)), 1e-4 * np.exp(-3.0 * (ln_x - 0.6)))
    probs /= probs.sum()
    position = ln_x if dominance is Dominance.DOMINATING else ln_x + 0.3 * 2.0**-k
    return MomentLaw(k, offset, probs, probs * np.exp(position), 0.0, 0.0, dominance, 64, 0.0)


def _hinge(law: MomentLaw, c: np.ndarray) -> np.ndarray:
    """E[(X − c)_+] for every c, atoms at the lattice points (DOMINATING) or at their means."""
    with np.errstate(divide="ignore", invalid="ignore"):
        x = np.where(law.probs > 0, law.moments / law.probs, 0.0)
    return np.array([np.sum(law.probs * np.maximum(x - ci, 0.0)) for ci in c])


@pytest.mark.parametrize("dominance", list(Dominance))
def test_thinning_keeps_mass_and_mean_and_the_convex_order(dominance):
    """The thinned law has the same mass and first moment (to rounding), far fewer atoms, and is a
    spread (DOMINATING: E[(X − c)_+] never smaller) or a contraction (DOMINATED: never larger) of the
    original, checked by brute force at thresholds across the whole range. Catches a contraction
    applied to the upper side (or a spread to the lower one), a split that moves the mean, and a
    thinning that keeps every atom."""
    law = _heavy_law(dominance)
    thin = thinned(law)
    assert np.count_nonzero(thin.probs) < 0.5 * np.count_nonzero(law.probs)
    assert thin.probs.sum() == pytest.approx(law.probs.sum(), rel=1e-13)
    assert thin.moments.sum() == pytest.approx(law.moments.sum(), rel=1e-12)
    assert thin.relative_error > 0.0
    thin = MomentLaw(thin.step_exponent, thin.offset, thin.probs, thin.moments, 0.0, 0.0, dominance, 64, 0.0)
    c = np.exp(np.linspace(-1.0, 10.0, 400))
    before, after = _hinge(law, c), _hinge(thin, c)
    slack = 1e-12 * law.moments.sum()
    if dominance is Dominance.DOMINATING:
        assert np.all(after >= before - slack)
    else:
        assert np.all(after <= before + slack)
    assert np.max(np.abs(after - before)) > 0.0  # something was moved


def test_small_sigma_allocation_still_brackets_the_unthinned_one(monkeypatch):
    """σ = 0.46, t = 2000 (ε ≈ 3.5 at δ = 1e-5): thinning is active at the top levels (it changes
    some laws), and the ε bracket from the thinned laws at base lattice 2^-4 still contains the
    bracket the unthinned engine (tested against exact values and Monte Carlo in this folder) gives
    at the twice finer 2^-5: thinning may only widen, never cross. Catches thinning on the wrong
    side of the convex order, which moves an end past the unthinned one."""
    import verifier.pld.geometric as geometric
    from verifier.pld.allocation import convex_allocation

    def epsilon(dominance, lattice):
        law = convex_allocation(Gaussian(0.46), 2000, dominance, step_exponent=lattice, tail_budget=1e-12)
        return law.epsilon(1e-5, Direction.REMOVE)

    original, changed = geometric.thinned, []

    def recording(law):
        out = original(law)
        changed.append(out is not law)
        return out

    monkeypatch.setattr(geometric, "thinned", recording)
    thin = (epsilon(Dominance.DOMINATED, 4), epsilon(Dominance.DOMINATING, 4))
    assert any(changed)
    monkeypatch.setattr(geometric, "thinned", lambda law: law)
    fine = (epsilon(Dominance.DOMINATED, 5), epsilon(Dominance.DOMINATING, 5))
    assert thin[0] <= fine[0] <= fine[1] <= thin[1]
    assert thin[1] - thin[0] < 3e-3  # still informative (unthinned at 2^-4: 2.0e-3)
