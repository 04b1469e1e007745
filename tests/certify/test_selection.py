"""The exponential mechanism and permute-and-flip (issue 40): claims decided against the worst score
instance found by exact enumeration of the mechanisms' output laws (mpmath at 40 digits for the
exponential mechanism, exact rationals for permute-and-flip at ε = 2 ln 2, where every coin
e^{ε(u − u*)/2} of integer scores is a power of 1/2), never against verifier's own formulas."""

from __future__ import annotations

import itertools
import json
import math
from fractions import Fraction

import mpmath
import pytest

from verifier._types import Direction
from verifier.adapters import from_dp_event
from verifier.certify.claim import parse_claim
from verifier.certify.verdict import Verdict, certify
from verifier.cli import main
from verifier.errors import InvalidArgument
from verifier.pairs import Laplace, RandomizedResponse
from verifier.pairs.bounded_range import BoundedRange

MPMATH_DPS = 40  # working precision of this module's tests (tests/conftest.py)


# ---- independent references: the mechanisms' output laws, enumerated -----------------------------


def em_law(scores, eps) -> list:
    """Exponential mechanism, weights e^{ε u/2} (Δ = 1), in mpmath."""
    weights = [mpmath.e ** (mpmath.mpf(eps) * u / 2) for u in scores]
    total = mpmath.fsum(weights)
    return [w / total for w in weights]


def pf_law(scores) -> list[Fraction]:
    """Permute-and-flip at ε = 2 ln 2 (coins 2^{u − u*}, integer scores), by enumerating every order."""
    best = max(scores)
    keep = [Fraction(1, 2 ** (best - u)) for u in scores]
    orders = list(itertools.permutations(range(len(scores))))
    law = [Fraction(0)] * len(scores)
    for order in orders:
        reach = Fraction(1)
        for r in order:
            law[r] += reach * keep[r] / len(orders)
            reach *= 1 - keep[r]
    return law


def hockey(p, q, gamma):
    return sum(max(0, a - gamma * b) for a, b in zip(p, q))


def em_sup_delta(eps: float, x: float) -> mpmath.mpf:
    """The largest δ(x) over two-candidate instances (a, 0) against (a + 1, −1), both orders, by a
    golden-section search over a refined on a grid (each instance's law enumerated)."""
    gamma = mpmath.e ** mpmath.mpf(x)

    def value(a):
        p, q = em_law([a, 0], eps), em_law([a + 1, -1], eps)
        return max(hockey(p, q, gamma), hockey(q, p, gamma))

    grid = [mpmath.mpf(-12) + i * mpmath.mpf(24) / 400 for i in range(401)]
    a = max(grid, key=value)
    lo, hi = a - mpmath.mpf(24) / 400, a + mpmath.mpf(24) / 400
    golden = (mpmath.sqrt(5) - 1) / 2
    for _ in range(120):
        c, d = hi - golden * (hi - lo), lo + golden * (hi - lo)
        if value(c) > value(d):
            hi = d
        else:
            lo = c
    return value((lo + hi) / 2)


def em_truth_epsilon(eps: float, delta: float) -> float:
    """ε(δ) of the worst two-candidate instance: the root of em_sup_delta(ε', ·) = δ (bisection)."""
    lo, hi = 0.0, eps
    for _ in range(40):
        mid = (lo + hi) / 2
        if em_sup_delta(eps, mid) > delta:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


# ---- the exponential mechanism ---------------------------------------------------------------------


@pytest.mark.parametrize("eps", [0.3, 1.0, 4.0])
@pytest.mark.parametrize("x", [-0.5, 0.0, 0.2, 0.6])
def test_bounded_range_pair_is_the_sup_of_two_candidate_instances(eps, x):
    """Catches a pair whose curve is RR(ε)'s (too high: above the sup) or BR at ε/2 (too low)."""
    x = x * eps
    truth = em_sup_delta(eps, x)
    got = BoundedRange(eps).delta(x, Direction.REMOVE)
    assert abs(truth - got.lower) <= 1e-12 * max(truth, 1e-300) + 1e-15 and got.lower <= got.upper


def test_no_three_candidate_instance_exceeds_the_bounded_range_pair():
    """Random score instances with three and four candidates (each score moved by at most 1) stay
    below the pair, in both orders; catches a dominating pair built for two candidates only."""
    rng = __import__("numpy").random.default_rng(40)
    pair = BoundedRange(1.0)
    for _ in range(300):
        m = int(rng.integers(3, 5))
        base = list(rng.uniform(-3, 3, m))
        moved = [u + float(d) for u, d in zip(base, rng.uniform(-1, 1, m))]
        p, q = em_law(base, 1.0), em_law(moved, 1.0)
        for x in (0.0, 0.3, 0.8):
            gamma = mpmath.e ** mpmath.mpf(x)
            assert max(hockey(p, q, gamma), hockey(q, p, gamma)) <= pair.delta(x, Direction.REMOVE).upper + 1e-15


@pytest.mark.parametrize(("eps", "delta"), [(1.0, 1e-3)])
def test_certify_decides_exponential_claims_one_percent_either_side(eps, delta):
    truth = em_truth_epsilon(eps, delta)
    claim = {"mechanism": {"name": "exponential", "epsilon": eps}, "scheme": {"name": "single"}, "delta": delta}
    assert certify(parse_claim({**claim, "epsilon": 1.01 * truth})).verdict is Verdict.CERTIFIED
    assert certify(parse_claim({**claim, "epsilon": 0.99 * truth})).verdict is Verdict.VIOLATED


def test_composed_exponential_sits_between_its_member_and_the_dominating_pair():
    """Ten runs: the LOWER end is the ten-fold composition of the instance RR(ε/2) (enumerated as a
    binomial), the UPPER end at or above it and below the ε-DP bound (RR(ε) composed)."""
    eps, times, x = 0.5, 10, 1.0
    outcome = certify(parse_claim({"mechanism": {"name": "exponential", "epsilon": eps}, "scheme": {"name": "composed", "times": times},
                                   "epsilon": x, "delta": 1e-6}))
    e0 = mpmath.mpf(eps) / 2
    hi, lo = mpmath.e ** e0 / (1 + mpmath.e ** e0), 1 / (1 + mpmath.e ** e0)
    member = mpmath.fsum(mpmath.binomial(times, j) * max(0, hi ** j * lo ** (times - j) - mpmath.e ** x * lo ** j * hi ** (times - j))
                         for j in range(times + 1))
    bracket = outcome.delta.combined
    assert abs(bracket.lower - member) <= 1e-9 * member
    e0 = mpmath.mpf(eps)
    hi, lo = mpmath.e ** e0 / (1 + mpmath.e ** e0), 1 / (1 + mpmath.e ** e0)
    pure = mpmath.fsum(mpmath.binomial(times, j) * max(0, hi ** j * lo ** (times - j) - mpmath.e ** x * lo ** j * hi ** (times - j))
                       for j in range(times + 1))
    assert member <= bracket.upper <= pure


# ---- permute-and-flip ------------------------------------------------------------------------------

_PF_EPS = 2 * math.log(2)


def _pf_instances(max_m: int = 3, top: int = 2):
    for m in range(2, max_m + 1):
        for base in itertools.product(range(top + 1), repeat=m):
            for shift in itertools.product((-1, 0, 1), repeat=m):
                yield pf_law(base), pf_law([u + d for u, d in zip(base, shift)])


def test_permute_and_flip_law_enumeration_matches_the_two_candidate_laplace_threshold():
    """Two candidates, gap s: P(candidate 1) = 1 − 2^{−s}/2 for s >= 0 (the Laplace CDF, proofs step 5)."""
    for s in range(4):
        assert pf_law([s, 0])[0] == 1 - Fraction(1, 2 ** s) / 2


@pytest.mark.parametrize("x", [0.0, 0.25, 0.5, 1.0])
def test_permute_and_flip_sup_over_enumerated_instances_is_laplace_and_below_rr(x):
    """Every instance with up to three candidates (scores 0..2, each moved by at most 1) lies at or
    below the Laplace curve with Δ/b = ε (dp_accounting's statement, as an upper bound, holds on all of
    them) and below RR(ε) (verifier's UPPER); at x = 0 an instance attains Laplace's value exactly."""
    gamma = Fraction(math.exp(x)) if x else Fraction(1)
    best = max(max(hockey(p, q, gamma), hockey(q, p, gamma)) for p, q in _pf_instances())
    laplace = Laplace(1.0, _PF_EPS).delta(x, Direction.REMOVE)
    rr = RandomizedResponse(_PF_EPS).delta(x, Direction.REMOVE)
    assert float(best) <= laplace.upper + 1e-15 and float(best) <= rr.lower
    if x == 0.0:
        assert best == Fraction(1, 2) and laplace.lower <= 0.5 <= laplace.upper


def test_certify_decides_permute_and_flip_claims_around_the_enumerated_truth():
    """δ(0) = 1/2 is attained by an enumerated instance: 1% below is VIOLATED; 1% above lies between
    the Laplace LOWER and the RR(ε) UPPER end (3/5), INCONCLUSIVE; 1% above 3/5 is CERTIFIED."""
    claim = {"mechanism": {"name": "permute_and_flip", "epsilon": _PF_EPS}, "scheme": {"name": "single"}, "epsilon": 0.0}
    assert certify(parse_claim({**claim, "delta": 0.99 * 0.5})).verdict is Verdict.VIOLATED
    assert certify(parse_claim({**claim, "delta": 1.01 * 0.5})).verdict is Verdict.INCONCLUSIVE
    assert certify(parse_claim({**claim, "delta": 1.01 * 0.6})).verdict is Verdict.CERTIFIED


def test_permute_and_flip_member_is_an_enumerated_instance():
    """The composed LOWER side runs RR(ln(2e^{ε/2} − 1)): at ε = 2 ln 2 that is RR(ln 3), the
    instance with gap −1 against +1 (laws (1/4, 3/4) and (3/4, 1/4))."""
    from verifier.schemes import Selection

    member = Selection("permute_and_flip", _PF_EPS).member
    assert pf_law([0, 1]) == [Fraction(1, 4), Fraction(3, 4)] and pf_law([1, 0]) == [Fraction(3, 4), Fraction(1, 4)]
    assert member.epsilon0 <= math.log(3) and math.log(3) - member.epsilon0 < 1e-15


# ---- reading them: claim files, dp_accounting events, one-line refusals ----------------------------


def _event(name: str, **fields) -> dict:
    return {"module_name": "dp_accounting.dp_event", "class_name": name, **fields}


def test_dp_events_read_as_selection_claims():
    claim = from_dp_event(_event("SelfComposedDpEvent", event=_event("ExponentialMechanismDpEvent", epsilon=0.5), count=4), epsilon=1.0, delta=1e-5)
    assert claim.mechanism == {"name": "exponential", "epsilon": 0.5} and claim.scheme == {"name": "composed", "times": 4}
    claim = from_dp_event(_event("PermuteAndFlipDpEvent", epsilon=1.0), epsilon=1.0, delta=1e-5)
    assert claim.mechanism == {"name": "permute_and_flip", "epsilon": 1.0}


@pytest.mark.parametrize(
    ("event", "named"),
    [
        (_event("PoissonSampledDpEvent", sampling_probability=0.1, event=_event("ExponentialMechanismDpEvent", epsilon=1.0)), "poisson"),
        (_event("PermuteAndFlipDpEvent", epsilon=-1.0), "event.epsilon"),
        (_event("ExponentialMechanismDpEvent", epsilon="one"), "event.epsilon"),
        (_event("ExponentialMechanismDpEvent"), "event.epsilon"),
    ],
)
def test_malformed_selection_events_exit_2_with_one_line(tmp_path, capsys, event, named):
    path = tmp_path / "event.json"
    path.write_text(json.dumps(event))
    code = main(["certify", "--dp-event", str(path), "--epsilon", "1", "--delta", "1e-5"])
    err = capsys.readouterr().err
    assert code == 2 and named in err and len(err.strip().splitlines()) == 1, err


@pytest.mark.parametrize("mechanism", [{"name": "exponential", "epsilon": 0}, {"name": "permute_and_flip"}, {"name": "exponential", "epsilon": 1, "sigma": 1}])
def test_malformed_selection_claims_are_rejected(mechanism):
    with pytest.raises(InvalidArgument):
        parse_claim({"mechanism": mechanism, "scheme": {"name": "single"}, "epsilon": 1.0, "delta": 1e-5})
