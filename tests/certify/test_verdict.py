"""The verdict rule and the ε/δ cross-check, on hand-made bounds and on the issue's Gaussian claims
(whose truth is settled independently by the mpmath reference integral)."""

import mpmath
import pytest

from verifier._types import Bound, Direction, Quantity, Side
from verifier.certify.claim import parse_claim
from verifier.certify.verdict import Verdict, certify, cross_check, decide
from verifier.errors import InconsistentBounds
from verifier.reference.pairs import gaussian_delta

ADD, REMOVE = Direction.ADD, Direction.REMOVE
BOTH = (ADD, REMOVE)


def b(value, side, direction, quantity=Quantity.DELTA, method="m", rigorous=True):
    return Bound(value, side, direction, quantity, 1.0, method, "cite", rigorous=rigorous)


def test_certified_needs_an_upper_bound_below_the_claim_in_every_direction():
    bounds = [b(0.5e-5, Side.UPPER, ADD), b(2e-5, Side.UPPER, REMOVE)]
    assert decide(1e-5, bounds, BOTH).verdict is Verdict.INCONCLUSIVE
    assert decide(1e-5, bounds, (ADD,)).verdict is Verdict.CERTIFIED
    assert decide(1e-5, bounds + [b(0.9e-5, Side.UPPER, REMOVE)], BOTH).verdict is Verdict.CERTIFIED


def test_an_upper_bound_equal_to_the_claim_certifies_and_a_lower_bound_equal_does_not_violate():
    assert decide(1e-5, [b(1e-5, Side.UPPER, ADD)], (ADD,)).verdict is Verdict.CERTIFIED
    assert decide(1e-5, [b(1e-5, Side.LOWER, ADD)], (ADD,)).verdict is Verdict.INCONCLUSIVE


def test_one_violated_direction_suffices():
    bounds = [b(0.5e-5, Side.UPPER, ADD), b(2e-5, Side.LOWER, REMOVE), b(3e-5, Side.UPPER, REMOVE)]
    decision = decide(1e-5, bounds, BOTH)
    assert decision.verdict is Verdict.VIOLATED
    assert any(r.startswith("remove") and "lower bound" in r for r in decision.reasons)


def test_non_rigorous_bounds_and_other_quantities_never_decide():
    bounds = [b(0.5e-5, Side.UPPER, ADD, rigorous=False), b(0.1, Side.UPPER, ADD, quantity=Quantity.EPSILON)]
    assert decide(1e-5, bounds, (ADD,)).verdict is Verdict.INCONCLUSIVE
    assert decide(1e-5, [], BOTH).verdict is Verdict.INCONCLUSIVE


def test_contradictory_bounds_raise_naming_both_methods():
    bounds = [b(2e-5, Side.LOWER, ADD, method="low"), b(1e-5, Side.UPPER, ADD, method="high")]
    with pytest.raises(InconsistentBounds, match="low.*high"):
        decide(1e-5, bounds, (ADD,))


def test_cross_check_catches_epsilon_and_delta_disagreeing():
    eps_up = b(0.9, Side.UPPER, ADD, Quantity.EPSILON, method="eps-method")
    delta_low = b(2e-5, Side.LOWER, ADD, method="delta-method")
    with pytest.raises(InconsistentBounds, match="eps-method.*delta-method"):
        cross_check(1.0, 1e-5, [delta_low], [eps_up], (ADD,))
    eps_low = b(1.1, Side.LOWER, ADD, Quantity.EPSILON)
    delta_up = b(0.5e-5, Side.UPPER, ADD)
    with pytest.raises(InconsistentBounds):
        cross_check(1.0, 1e-5, [delta_up], [eps_low], (ADD,))
    cross_check(1.0, 1e-5, [delta_up], [eps_up], (ADD,))  # agreeing: no error


GAUSSIAN_CASES = [
    # (sigma, sensitivity, neighboring, epsilon, verdict) at delta = 1e-5: the acceptance claims
    (1.0, 1.0, "add_or_remove", 4.3772, Verdict.CERTIFIED),
    (1.0, 1.0, "add_or_remove", 4.30, Verdict.VIOLATED),
    (1.0, 1.0, "add_or_remove", -0.0048, Verdict.VIOLATED),
    (2.0, 1.0, "replace_one", 2.166, Verdict.VIOLATED),
]


@pytest.mark.parametrize("sigma, sensitivity, neighboring, epsilon, expected", GAUSSIAN_CASES)
def test_gaussian_claims_get_the_verdict_the_reference_integral_implies(sigma, sensitivity, neighboring, epsilon, expected):
    c = parse_claim(
        {"mechanism": {"name": "gaussian", "sigma": sigma, "sensitivity": sensitivity}, "scheme": {"name": "single"},
         "neighboring": neighboring, "epsilon": epsilon, "delta": 1e-5}
    )
    outcome = certify(c)
    assert outcome.verdict is expected
    # oracle: mpmath integration of the hockey stick (replace-one: the sensitivity-2Δ pair)
    shift = 2 * sensitivity if neighboring == "replace_one" else sensitivity
    truth = max(gaussian_delta(sigma, epsilon, d, sensitivity=shift) for d in ("add", "remove"))
    assert (truth <= mpmath.mpf(1e-5)) == (expected is Verdict.CERTIFIED)
    # the bracket in the certificate contains the truth
    for direction in BOTH:
        bracket = outcome.delta.brackets[direction]
        assert bracket.lower <= truth <= bracket.upper


def test_claim_at_float_resolution_is_inconclusive_and_the_truth_is_within_one_ulp():
    c = parse_claim(
        {"mechanism": {"name": "gaussian", "sigma": 1.0}, "scheme": {"name": "single"}, "epsilon": 4.3772,
         "delta": 9.999061715485875e-06}
    )
    assert certify(c).verdict is Verdict.INCONCLUSIVE
    truth = gaussian_delta(1.0, 4.3772, "remove")
    assert mpmath.mpf(9.999061715485875e-06) < truth < mpmath.mpf(9.999061715485877e-06)


def test_scheme_without_a_rigorous_method_is_inconclusive_with_the_reason(monkeypatch):
    import verifier.certify.verdict as verdict

    monkeypatch.setattr(verdict, "select_methods", lambda scheme, only=None: [])
    c = parse_claim(
        {"mechanism": {"name": "gaussian", "sigma": 1.0}, "scheme": {"name": "allocation", "steps": 10},
         "epsilon": 1.0, "delta": 1e-5}
    )
    outcome = certify(c)
    assert outcome.verdict is Verdict.INCONCLUSIVE and outcome.delta is None
    assert "Allocation" in outcome.decision.reasons[0]
