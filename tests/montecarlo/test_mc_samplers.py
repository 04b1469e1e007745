"""Every scheme's privacy-loss sampler, both directions, against exact δ(ε) computed independently:
closed forms of the pairs, exact finite sums over product distributions (the pair's masses
multiplied out by hand), and the exact t = 2 table of notes/random-allocation.md §7.5."""

import itertools

import numpy as np
import pytest

from verifier._types import Direction, Measure
from verifier.errors import InvalidArgument
from verifier.montecarlo import estimate_delta, sample_loss
from verifier.pairs import DiscretePair, Gaussian, Laplace, RandomizedResponse
from verifier.schemes import Allocation, Composed, Poisson, Single

#: 99.99% intervals: a correct sampler misses one of these ~60 fixed-seed checks with prob < 1%.
CONFIDENCE = 0.9999
SAMPLES = 200_000
#: The intervals must also be informative (a vacuous interval would contain anything).
MAX_WIDTH = 0.02
EPSILONS = (-0.5, 0.0, 0.4, 1.0, 2.0)

#: notes/random-allocation.md §7.5 (σ = 1, t = 2; Poisson λ = 1/2), ~8 significant digits.
T2_EPS = (0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0)
T2_TABLE = {
    ("allocation", "remove"): (2.97762225e-01, 2.16845146e-01, 1.49177523e-01, 9.67846539e-02, 5.92065011e-02, 1.86648880e-02, 4.74577763e-03, 1.67702771e-04),
    ("allocation", "add"): (2.97762225e-01, 2.13502048e-01, 1.42686966e-01, 8.82532235e-02, 5.01976624e-02, 1.23616056e-02, 2.05592453e-03, 1.59026508e-05),
    ("poisson", "remove"): (2.72630282e-01, 2.03731860e-01, 1.47920133e-01, 1.04452902e-01, 7.17966359e-02, 3.13755327e-02, 1.24073596e-02, 1.45691858e-03),
    ("poisson", "add"): (2.72630282e-01, 1.70519741e-01, 8.53238600e-02, 2.84208607e-02, 3.77212734e-03, 0.0, 0.0, 0.0),
}
#: The table's own accuracy (~8 digits), added to the interval when comparing.
TABLE_ATOL = 1e-8

ASYMMETRIC = DiscretePair((0.6, 0.3, 0.1, 0.0), (0.1, 0.3, 0.4, 0.2))  # infinite loss both ways


def product(*vectors):
    out = np.array([1.0])
    for v in vectors:
        out = np.outer(out, np.asarray(v, dtype=float)).ravel()
    return out


def masses(pair):
    return pair._masses()


def exact_finite(p, q, epsilons, direction):
    """δ(ε) of the finite pair (p, q) by the pair's exact ball-arithmetic sum."""
    pair = DiscretePair(tuple(p / p.sum()), tuple(q / q.sum()))
    return [float(pair.delta(e, direction).upper) for e in epsilons]


def poisson_masses(pair, rate, steps):
    p, q = masses(pair)
    mix = rate * p + (1 - rate) * q
    return product(*[mix] * steps), product(*[q] * steps)


def allocation_masses(pair, t):
    """P̄_t = (1/t) Σ_i Q^{i−1}×P×Q^{t−i} and Q^t, multiplied out."""
    p, q = masses(pair)
    pbar = sum(product(*[p if j == i else q for j in range(t)]) for i in range(t)) / t
    return pbar, product(*[q] * t)


def finite_cases():
    rr = RandomizedResponse(1.0)
    for pair in (rr, ASYMMETRIC):
        p, q = masses(pair)
        yield f"single-{pair!r}", Single(pair), (p, q)
        yield f"composed3-{pair!r}", Composed(Single(pair), 3), (product(p, p, p), product(q, q, q))
        yield f"poisson-{pair!r}", Poisson(pair, 0.3, 2), poisson_masses(pair, 0.3, 2)
        yield f"allocation2-{pair!r}", Allocation(pair, 2), allocation_masses(pair, 2)
        yield f"allocation3-{pair!r}", Allocation(pair, 3), allocation_masses(pair, 3)
        pbar, qbar = allocation_masses(pair, 2)
        # k = 2 of t = 5: ⌊5/2⌋ = 2 and 2-fold composition (Lemma 3.2); epochs compose the same way
        yield f"allocation-k2-{pair!r}", Allocation(pair, 5, k=2), (product(pbar, pbar), product(qbar, qbar))
        yield f"allocation-epochs2-{pair!r}", Allocation(pair, 2, epochs=2), (product(pbar, pbar), product(qbar, qbar))


CASES = list(finite_cases())


def check_contains(estimates, exact, atol=0.0):
    for est, value in zip(estimates, exact):
        assert est.lower - atol <= value <= est.upper + atol, (est, value)
        assert est.upper - est.lower < MAX_WIDTH


@pytest.mark.parametrize("direction", [Direction.ADD, Direction.REMOVE], ids=lambda d: d.value)
@pytest.mark.parametrize("name, scheme, pq", CASES, ids=[c[0] for c in CASES])
def test_finite_schemes_against_exact_product_sums(name, scheme, pq, direction):
    result = estimate_delta(scheme, EPSILONS, [direction], SAMPLES, seed=17, confidence=CONFIDENCE)
    check_contains(result.estimates[direction], exact_finite(*pq, EPSILONS, direction))


@pytest.mark.parametrize("direction", [Direction.ADD, Direction.REMOVE], ids=lambda d: d.value)
@pytest.mark.parametrize(
    "scheme, pair",
    [
        (Single(Gaussian(0.8)), Gaussian(0.8)),
        (Single(Laplace(1.5)), Laplace(1.5)),
        (Composed(Single(Gaussian(2.0)), 4), Gaussian(1.0)),  # Steinke 2022, Cor 10
        (Composed(Composed(Single(Laplace(2.0)), 1), 1), Laplace(2.0)),
    ],
    ids=["gaussian", "laplace", "composed-gaussian", "nested-composed"],
)
def test_continuous_single_and_composed_against_closed_forms(scheme, pair, direction):
    result = estimate_delta(scheme, EPSILONS, [direction], SAMPLES, seed=3, confidence=CONFIDENCE)
    check_contains(result.estimates[direction], [float(pair.delta(e, direction).lower) for e in EPSILONS])


@pytest.mark.parametrize("importance", ["on", "off"])
@pytest.mark.parametrize("kind, direction", list(itertools.product(["allocation", "poisson"], ["add", "remove"])))
def test_gaussian_t2_against_the_exact_table(kind, direction, importance):
    if kind == "poisson" and importance == "on":
        pytest.skip("importance sampling is for allocation only")
    scheme = Allocation(Gaussian(1.0), 2) if kind == "allocation" else Poisson(Gaussian(1.0), 0.5, 2)
    d = Direction(direction)
    result = estimate_delta(scheme, T2_EPS, [d], SAMPLES, seed=5, confidence=CONFIDENCE, importance=importance)
    check_contains(result.estimates[d], T2_TABLE[(kind, direction)], atol=TABLE_ATOL)


def test_poisson_add_is_exactly_zero_beyond_ln4():
    # per-step ratio Q/P_λ <= 1/(1 − λ) = 2, so L <= 2 ln 2 (notes §7.5)
    losses = sample_loss(Poisson(Gaussian(1.0), 0.5, 2), 100_000, Direction.ADD, np.random.default_rng(0))
    assert losses.max() <= 2 * np.log(2) + 1e-12


def test_allocation_with_one_step_is_the_pair_itself():
    rng = np.random.default_rng(4)
    for direction in Direction:
        alloc = sample_loss(Allocation(Gaussian(0.7), 1), 200_000, direction, rng)
        under = Measure.P if direction is Direction.REMOVE else Measure.Q
        single = Gaussian(0.7).sample_loss(200_000, direction, under, rng)
        # same law N(±ρ, 2ρ): compare mean and variance within 6 standard errors
        rho = 1 / (2 * 0.49)
        assert abs(alloc.mean() - single.mean()) < 6 * np.sqrt(4 * rho / 200_000)
        assert abs(alloc.var() - 2 * rho) < 6 * 2 * rho * np.sqrt(2 / 200_000)


def test_sampler_rejects_bad_input():
    with pytest.raises(InvalidArgument, match="size"):
        sample_loss(Single(Gaussian(1.0)), -1, Direction.ADD, np.random.default_rng(0))
    with pytest.raises(InvalidArgument, match="direction"):
        sample_loss(Single(Gaussian(1.0)), 3, "add", np.random.default_rng(0))
    with pytest.raises(InvalidArgument, match="scheme"):
        sample_loss(Gaussian(1.0), 3, Direction.ADD, np.random.default_rng(0))
