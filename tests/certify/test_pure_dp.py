"""Pure DP (δ = 0): ε(0), the largest privacy loss, against brute force over the product outcome
space in mpmath, and δ = 0 claims decided on it (issue 25, Done-when 3)."""

import itertools
import json
import math

import mpmath
import pytest

from verifier._types import Direction, Quantity, Side
from verifier.certify.claim import parse_claim
from verifier.certify.methods.pure import max_loss_bracket
from verifier.certify.portfolio import collect_bounds
from verifier.certify.verdict import Verdict, certify
from verifier.cli import main
from verifier.pairs import ApproxDP, DiscretePair, Gaussian, Laplace, RandomizedResponse
from verifier.schemes import Allocation, Composed, Poisson, Sequence, Single

MPMATH_DPS = 50  # working precision of this module's tests (tests/conftest.py)


def _rr_masses(epsilon0: float, k: int):
    """k-ary randomized response at ε0 (P: true value 1, Q: true value 0), in mpmath."""
    big = mpmath.e ** mpmath.mpf(epsilon0)
    z = big + k - 1
    p = [1 / z, big / z] + [1 / z] * (k - 2)
    return p, p[1::-1] + p[2:]


def _brute_max_loss(steps, direction):
    """max over the product outcomes with positive mass of the loss, each step given as (p, q, rate):
    the step's laws are rate·p + (1 − rate)·q against q (REMOVE) or the other way round (ADD)."""
    laws = []
    for p, q, rate in steps:
        mixed = [rate * a + (1 - rate) * b for a, b in zip(p, q)]
        laws.append((mixed, q) if direction is Direction.REMOVE else (q, mixed))
    best = -mpmath.inf
    for outcome in itertools.product(*(range(len(first)) for first, _ in laws)):
        num = mpmath.fprod(first[i] for (first, _), i in zip(laws, outcome))
        den = mpmath.fprod(second[i] for (_, second), i in zip(laws, outcome))
        if num > 0:
            best = max(best, mpmath.inf if den == 0 else mpmath.log(num / den))
    return best


@pytest.mark.parametrize("direction", list(Direction))
def test_poisson_rr_composition_matches_brute_force(direction):
    """Poisson-sampled ternary RR (3 steps) then a binary RR step: ε(0) against enumeration of the
    4-fold product (81·... outcomes). Catches: the REMOVE amplification ln(1 + λ(e^ε − 1)) used for
    ADD (whose value is −ln(1 − λ(1 − e^{−ε}))), a missing log, steps not summed."""
    p3, q3 = _rr_masses(1.5, 3)
    p2, q2 = _rr_masses(0.7, 2)
    want = _brute_max_loss([(p3, q3, mpmath.mpf("0.3"))] * 3 + [(p2, q2, 1)], direction)
    scheme = Sequence((Poisson(RandomizedResponse(1.5, 3), 0.3, 3), Single(RandomizedResponse(0.7))))
    got = max_loss_bracket(scheme, direction)
    assert got.lower <= want <= got.upper and got.upper - got.lower < 1e-12


def test_add_and_remove_differ_under_poisson_sampling():
    """ln(1 + λ(e − 1)) removing, −ln(1 − λ(1 − 1/e)) adding, for an ε0 = 1 step at λ = 0.5."""
    scheme = Poisson(Laplace(1.0), 0.5, 1)
    assert max_loss_bracket(scheme, Direction.REMOVE).lower == pytest.approx(math.log(1 + 0.5 * (math.e - 1)), rel=1e-15)
    assert max_loss_bracket(scheme, Direction.ADD).lower == pytest.approx(-math.log(1 - 0.5 * (1 - 1 / math.e)), rel=1e-15)


def test_infinite_loss_mass_and_gaussian_steps():
    """P-mass where Q = 0 (a finite pair, (ε0, δ0)-DP with δ0 > 0) and Gaussian steps: ε(0) = +∞;
    Poisson-sampled Gaussian adding: sup ln(Q/M) = −ln(1 − λ) (M >= (1 − λ)Q), finite."""
    for scheme in (Single(DiscretePair((0.5, 0.5), (1.0, 0.0))), Composed(Single(ApproxDP(1.0, 1e-6)), 2), Single(Gaussian(5.0))):
        assert max_loss_bracket(scheme, Direction.REMOVE).lower == math.inf
    poisson = Poisson(Gaussian(1.0), 0.25, 4)
    assert max_loss_bracket(poisson, Direction.REMOVE).lower == math.inf
    add = max_loss_bracket(poisson, Direction.ADD)
    assert add.lower <= -4 * mpmath.log(1 - mpmath.mpf("0.25")) <= add.upper


def test_pair_max_loss_of_a_finite_pair_is_the_largest_log_ratio():
    pair = DiscretePair((0.5, 0.3, 0.2), (0.25, 0.5, 0.25))
    assert pair.max_loss(Direction.REMOVE).lower == pytest.approx(math.log(2), rel=1e-15)
    assert pair.max_loss(Direction.ADD).lower == pytest.approx(math.log(0.5 / 0.3), rel=1e-15)


def _claim(mechanism, scheme, epsilon, delta=0.0, neighboring="add_or_remove"):
    return parse_claim({"mechanism": mechanism, "scheme": scheme, "neighboring": neighboring, "epsilon": epsilon, "delta": delta})


LAPLACE_10 = ({"name": "laplace", "scale": 1.0}, {"name": "composed", "times": 10})


@pytest.mark.parametrize("epsilon, verdict", [(10.0, Verdict.CERTIFIED), (9.99, Verdict.VIOLATED)])
def test_laplace_ten_steps(epsilon, verdict):
    """10 Laplace steps of ε0 = Δ/b = 1 are ε-DP exactly for ε >= 10 (Steinke 2022, Prop 7: the loss
    is at most 1 per step, attained with P-mass 1/2 per step)."""
    outcome = certify(_claim(*LAPLACE_10, epsilon))
    assert outcome.verdict is verdict
    assert (outcome.epsilon.combined.lower, outcome.epsilon.combined.upper) == (10.0, 10.0)
    assert "largest privacy loss" in outcome.decision.reasons[0]


def test_gaussian_is_never_pure_dp():
    outcome = certify(_claim({"name": "gaussian", "sigma": 5.0}, {"name": "single"}, 20.0))
    assert outcome.verdict is Verdict.VIOLATED
    assert outcome.epsilon.combined.lower == math.inf


def test_pure_claim_without_a_max_loss_method_falls_back_to_delta():
    """Random allocation has no ε(0) method: the δ(ε) lower bound of the PLD engine (> 0 for a
    Gaussian step) decides."""
    claim = _claim({"name": "gaussian", "sigma": 1.0}, {"name": "allocation", "steps": 4}, 1.0)
    assert not any(b.quantity is Quantity.EPSILON and b.side is Side.LOWER for b in certify(claim).epsilon.bounds)
    assert certify(claim).verdict is Verdict.VIOLATED


def test_an_approximate_claim_is_certified_by_the_largest_loss():
    """δ(ε) = 0 <= δ for ε >= ε(0): the cheap method certifies (ε, δ) claims too."""
    outcome = certify(_claim(*LAPLACE_10, 10.0, delta=1e-9), only=["max_loss"])
    assert outcome.verdict is Verdict.CERTIFIED


def test_epsilon_query_at_delta_zero(capsys):
    assert main(["epsilon", "--mechanism", "rr", "--epsilon0", "0.5", "--scheme", "composed", "--times", "4", "--delta", "0", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["lower"], out["upper"]) == (2.0, 2.0)
    assert main(["epsilon", "--mechanism", "gaussian", "--sigma", "1", "--delta", "0", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["lower"] in (math.inf, "inf")


def test_other_methods_are_not_asked_for_epsilon_at_zero():
    found = collect_bounds(Poisson(Laplace(2.0), 0.1, 5), Quantity.EPSILON, 0.0, [Direction.REMOVE])
    assert {b.method for b in found.bounds} == {"max_loss"}
    assert any("not ε(0)" in s for s in found.skipped)


@pytest.mark.parametrize(
    "args, status",
    [
        (["--mechanism", "laplace", "--scale", "1", "--scheme", "composed", "--times", "10", "--epsilon", "10", "--delta", "0"], 0),
        (["--mechanism", "laplace", "--scale", "1", "--scheme", "composed", "--times", "10", "--epsilon", "9.99", "--delta", "0"], 1),
        (["--mechanism", "gaussian", "--sigma", "5", "--epsilon", "20", "--delta", "0"], 1),
        (["--mechanism", "gaussian", "--sigma", "5", "--epsilon", "20", "--delta", "-0.1"], 2),
    ],
)
def test_cli_exit_statuses(args, status, capsys):
    assert main(["certify", *args]) == status
    out = capsys.readouterr()
    if status == 1:
        assert "largest privacy loss" in out.out
