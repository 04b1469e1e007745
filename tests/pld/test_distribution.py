"""DiscretePLD: validation, refusal to combine mismatched objects, composition against the exact
rational convolution (both sides), truncation on the safe side, and the ε(δ) post-conditions."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from verifier._types import Direction, Dominance
from verifier.errors import IncompatibleObjects, InvalidArgument
from verifier.hockey import discrete_pld_delta
from verifier.pld import DiscretePLD, compose, self_compose
from verifier.reference.convolution import exact_pld_delta, exact_self_convolution

STEP = 2.0**-4
EPS = [-0.5, 0.0, 0.25, 0.7, 1.3, 2.0]


def _pld(probs, dominance=Dominance.DOMINATING, direction=Direction.REMOVE, offset=-3, inf=0.0, step=STEP) -> DiscretePLD:
    return DiscretePLD(step, offset, np.asarray(probs, dtype=float), inf, 0.0, dominance, direction)


def _random_probs(seed: int, n: int) -> np.ndarray:
    p = np.random.default_rng(seed).random(n) ** 3
    return p / p.sum()


def test_losses_are_exact_grid_points() -> None:
    pld = _pld([0.25, 0.5, 0.25], offset=-1)
    assert list(pld.losses()) == [-STEP, 0.0, STEP]


@pytest.mark.parametrize(
    "kwargs,name",
    [
        ({"step": 0.1}, "step"),
        ({"probs": [0.5, -0.1]}, "probs"),
        ({"inf": -1.0}, "infinite_mass"),
        ({"dominance": "up"}, "dominance"),
    ],
)
def test_invalid_fields_are_named(kwargs, name) -> None:
    base = {"probs": [0.5, 0.5]}
    base.update(kwargs)
    with pytest.raises(InvalidArgument, match=name):
        _pld(**base)


def test_dominating_may_not_drop_mass() -> None:
    with pytest.raises(InvalidArgument, match="dropped_mass"):
        DiscretePLD(STEP, 0, np.ones(1), 0.0, 0.1, Dominance.DOMINATING, Direction.ADD)


@pytest.mark.parametrize(
    "other,what",
    [
        (_pld([1.0], dominance=Dominance.DOMINATED), "dominance"),
        (_pld([1.0], direction=Direction.ADD), "direction"),
        (_pld([1.0], step=STEP / 2), "grid step"),
    ],
)
def test_compose_refuses_mismatches_naming_both_values(other, what) -> None:
    with pytest.raises(IncompatibleObjects, match=what) as info:
        compose(_pld([1.0]), other)
    message = str(info.value)
    if what == "dominance":
        assert "dominating" in message and "dominated" in message
    if what == "direction":
        assert "remove" in message and "add" in message


@pytest.mark.parametrize("dominance", [Dominance.DOMINATING, Dominance.DOMINATED])
@pytest.mark.parametrize("times,n", [(2, 60), (3, 70), (5, 8)])
def test_self_compose_is_one_sided_against_exact_convolution(dominance, times, n) -> None:
    probs = _random_probs(times * 100 + n, n)
    pld = _pld(probs, dominance=dominance, inf=0.0)
    composed = self_compose(pld, times, tail_mass=1e-13)
    exact = exact_self_convolution(probs, times)
    got = composed.delta(EPS)
    for e, value in zip(EPS, got):
        truth = exact_pld_delta(times * pld.offset, STEP, exact, 0, e)
        if dominance is Dominance.DOMINATING:
            assert value >= truth
        else:
            assert value <= truth
        assert abs(value - float(truth)) <= 1e-12  # FFT and truncation cost next to nothing


def test_compose_keeps_infinite_mass_on_the_safe_side() -> None:
    a = _pld(_random_probs(1, 50) * 0.9, inf=0.1)
    b = _pld(_random_probs(2, 60) * 0.8, inf=0.2)
    c = compose(a, b)
    assert c.infinite_mass >= 1 - 0.9 * 0.8
    lower = compose(
        DiscretePLD(STEP, -3, a.probs, 0.1, 0.0, Dominance.DOMINATED, Direction.REMOVE),
        DiscretePLD(STEP, -3, b.probs, 0.2, 0.0, Dominance.DOMINATED, Direction.REMOVE),
    )
    assert lower.infinite_mass <= 1 - 0.9 * 0.8 + 1e-15


@pytest.mark.parametrize("dominance", [Dominance.DOMINATING, Dominance.DOMINATED])
def test_truncation_moves_mass_the_safe_way(dominance) -> None:
    probs = np.array([1e-9, 1e-8] + [0.1] * 9 + [1e-8, 1e-9])
    probs /= probs.sum()
    pld = _pld(probs, dominance=dominance)
    point = _pld([1.0], dominance=dominance, offset=0)
    cut = compose(pld, point, tail_mass=1e-7)
    assert cut.probs.size < probs.size
    exact = discrete_pld_delta(pld.losses(), probs, np.array(EPS))
    if dominance is Dominance.DOMINATING:
        assert np.all(cut.delta(EPS) >= exact.lower)
    else:
        assert np.all(cut.delta(EPS) <= exact.upper)


@pytest.mark.parametrize("dominance", [Dominance.DOMINATING, Dominance.DOMINATED])
def test_epsilon_root_post_condition(dominance) -> None:
    pld = _pld(_random_probs(7, 40), dominance=dominance)
    for target in (1e-1, 1e-3, 1e-6):
        eps = pld.epsilon(target)
        if dominance is Dominance.DOMINATING:
            assert pld.delta(eps) <= target
        elif math.isfinite(eps):
            assert pld.delta(eps) > target


@pytest.mark.parametrize("dominance", [Dominance.DOMINATING, Dominance.DOMINATED])
@pytest.mark.parametrize("seed", range(4))
def test_epsilon_root_is_tight_against_the_mpmath_delta(dominance, seed: int) -> None:
    """The root (found from a float estimate, then bisected on the rigorous δ) sits within 1e-12 of
    where the 50-digit δ of the same PLD crosses the target."""
    probs = _random_probs(seed, 60)
    probs[::7] = 0.0  # gaps, as on a tail-coarsened grid
    pld = _pld(probs, dominance=dominance, offset=-20, inf=1e-9 * seed)
    for target in (0.2, 1e-3, 1e-6):
        eps = pld.epsilon(target)
        slack = 1e-12 * max(1.0, abs(eps))
        exact = [float(exact_pld_delta(pld.offset, pld.step, pld.probs, pld.infinite_mass, e)) for e in (eps - slack, eps + slack)]
        assert exact[0] > target >= exact[1]


def test_epsilon_is_infinite_when_the_infinite_mass_exceeds_delta() -> None:
    pld = _pld([0.5, 0.49], inf=0.01)
    assert pld.epsilon(1e-3) == math.inf
    assert pld.epsilon(0.02) < math.inf


def test_exact_pld_delta_agrees_with_the_kernel() -> None:
    probs = _random_probs(11, 30)
    got = discrete_pld_delta(np.arange(-3, 27) * STEP, probs, np.array(EPS))
    for e, lo, hi in zip(EPS, got.lower, got.upper):
        ref = float(exact_pld_delta(-3, STEP, [Fraction(float(p)) for p in probs], 0, e))
        assert lo <= ref <= hi


def test_epsilon_of_an_empty_dominated_pld_is_minus_infinity() -> None:
    """A DOMINATED PLD holding no mass certifies no finite lower end of ε (it must not fail)."""
    assert _pld([0.0], dominance=Dominance.DOMINATED).epsilon(1e-6) == -math.inf


@pytest.mark.parametrize("n,h", [(1, 1.0), (7, 1.0), (2000, 0.5), (3000, 2.0**-10)])
def test_discounted_cumsum_is_the_first_order_filter(n, h) -> None:
    """_discounted_cumsum (the ε root's placement filter) against the recursion y_n = x_n + e^{−h}y_{n−1}
    in mpmath; with h = 0.5 and 2000 points the blocks of ⌈600/h⌉ points are crossed (a wrong carry
    between blocks is caught)."""
    import mpmath

    from verifier.pld.distribution import _discounted_cumsum

    x = np.random.default_rng(n).random(n) ** 4
    got = _discounted_cumsum(x, h)
    with mpmath.workdps(30):
        y, decay = mpmath.mpf(0), mpmath.exp(-h)
        for i, value in enumerate(x):
            y = mpmath.mpf(float(value)) + decay * y
            assert abs(got[i] - y) <= 1e-12 * y
