"""Done-when 3 and 4 of issue 14: the exact small-n oracle for binary randomized response inside
verifier's bracket; Gaussian check-in claims CERTIFIED at 1.2× the best upper bound and VIOLATED at
0.8× the best lower bound; claims outside every theorem's regime INCONCLUSIVE with the reason."""

import math

import numpy as np
import pytest

from verifier._types import Direction, Side
from verifier.certify.claim import parse_claim
from verifier.certify.verdict import Verdict, certify
from verifier.cli import main
from verifier.pairs import Gaussian, RandomizedResponse
from verifier.pld.checkin import checkin_delta_lower, sum_pair
from verifier.rdp import delta_upper_for
from verifier.reference.checkin_rr import release_laws, rr_checkin_delta
from verifier.schemes import CheckIn

#: The oracle sums float64 products (relative error ~1e-15); compare with this absolute slack.
ORACLE_ATOL = 1e-13


def test_oracle_laws_are_probabilities_and_match_a_direct_enumeration():
    """n = 3: enumerate every check-in subset and every report vector directly (2^3 · 2^|S|)."""
    import itertools

    n, gamma, e0, m = 3, 0.4, 0.7, 1
    p = math.exp(e0) / (1 + math.exp(e0))
    bits1 = [1, 1, 0]  # user 1 holds 1 (D'); m = 1 other user holds 1
    direct = np.zeros((n + 1, n + 1))
    for sub in itertools.product([0, 1], repeat=n):
        w = math.prod(gamma if s else 1 - gamma for s in sub)
        members = [i for i in range(n) if sub[i]]
        for reports in itertools.product([0, 1], repeat=len(members)):
            pr = math.prod(p if r == bits1[i] else 1 - p for r, i in zip(reports, members))
            direct[len(members), sum(reports)] += w * pr
    p1, p0 = release_laws(n, gamma, e0, m)
    np.testing.assert_allclose(p1, direct, atol=1e-15)
    assert p0.sum() == pytest.approx(1.0, abs=1e-14)


@pytest.mark.parametrize(
    "n,gamma,e0,rounds", [(5, 0.5, 1.0, 1), (12, 0.3, 2.0, 2), pytest.param(40, 0.1, 1.0, 1, marks=pytest.mark.slow)]
)
def test_oracle_lies_in_verifiers_bracket(n, gamma, e0, rounds):
    """Done-when 3: lower (specific-pair PLD) <= exact (oracle, worst m) <= upper (Eq. (5) + WBK via RDP)."""
    pair = RandomizedResponse(e0)
    for eps in (0.1, 0.5):
        exact = rr_checkin_delta(n, gamma, e0, eps, rounds)
        lower = max(checkin_delta_lower(pair, n, gamma, rounds, eps, d, step=2.0**-7) for d in Direction)
        upper = max(delta_upper_for(CheckIn(pair, n, gamma, rounds), eps, d).value for d in Direction)
        assert lower <= exact + ORACLE_ATOL and exact <= upper + ORACLE_ATOL


def test_sum_pair_of_randomized_response_is_the_count_law():
    p = math.e / (1 + math.e)
    pair = sum_pair(RandomizedResponse(1.0), 2)
    masses_p, masses_q = pair._masses()
    # one report from P and one from Q, counted as "outcome-1" reports; P and Q of RR are mirror images
    assert sorted(masses_q.tolist()) == pytest.approx(sorted([p * p, 2 * p * (1 - p), (1 - p) ** 2]))
    assert sorted(masses_p.tolist()) == pytest.approx(sorted([p * (1 - p), p * p + (1 - p) ** 2, p * (1 - p)]))


def _claim(epsilon: float, delta: float, **scheme) -> dict:
    return {
        "mechanism": {"name": "gaussian", "sigma": 1.0, "sensitivity": 1.0},
        "scheme": {"name": "checkin", "users": 30, "rate": 0.1, "rounds": 2, "aggregation": "sum", **scheme},
        "neighboring": "replace_one",
        "epsilon": epsilon,
        "delta": delta,
    }


def test_gaussian_checkin_certified_above_upper_and_violated_below_lower():
    delta = 1e-3
    probe = certify(parse_claim(_claim(1.0, delta)))
    brackets = probe.epsilon.brackets
    upper = max(b.upper for b in brackets.values())
    lower = max(b.lower for b in brackets.values())
    assert 0 < lower < upper < math.inf
    assert certify(parse_claim(_claim(1.2 * upper, delta))).verdict is Verdict.CERTIFIED
    violated = certify(parse_claim(_claim(0.8 * lower, delta)))
    assert violated.verdict is Verdict.VIOLATED
    assert any("checkin-lower" in r for r in violated.decision.reasons)


def test_outside_every_regime_is_inconclusive_with_the_reason(capsys):
    code = main(
        ["certify", "--mechanism", "laplace", "--scale", "1", "--scheme", "checkin", "--users", "30", "--rate", "0.1",
         "--aggregation", "sum", "--neighboring", "replace_one", "--epsilon", "1", "--delta", "1e-5"]
    )
    out = capsys.readouterr().out
    assert code == 3 and out.startswith("INCONCLUSIVE")
    assert "sum aggregation is analysed for the Gaussian pair only" in out


def test_checkin_claims_need_replace_one():
    with pytest.raises(Exception, match="replace_one"):
        parse_claim({**_claim(1.0, 1e-3), "neighboring": "add_or_remove"})


def test_checkin_and_shuffle_certificates_validate_against_the_schema():
    jsonschema = pytest.importorskip("jsonschema")
    import json

    from verifier.certify.certificate import schema, to_certificate

    for claim in (
        {"mechanism": {"name": "rr", "epsilon0": 1.0}, "scheme": {"name": "checkin", "users": 8, "rate": 0.3},
         "neighboring": "replace_one", "epsilon": 0.01, "delta": 0.1},
        {"mechanism": {"name": "gaussian", "sigma": 2.0}, "scheme": {"name": "shuffle", "users": 3},
         "neighboring": "replace_one", "epsilon": 0.1, "delta": 0.5},
    ):
        cert = to_certificate(certify(parse_claim(claim)))
        jsonschema.Draft202012Validator(schema()).validate(json.loads(json.dumps(cert)))
        assert cert["claim"]["scheme"]["name"] == claim["scheme"]["name"]


def test_fmt_route_upper_holds_the_oracle_and_uses_fmt_where_its_regime_holds():
    """One round of an (ε0, δ0)-DP randomizer: the dominating finite pair's δ(ε) is above the exact
    oracle (n = 12: FMT's closed form never applies there, its clone bound does for some k); for
    large n the clone bound beats (ε0, δ0) for the bulk of k and the bound is far below the fallback's."""
    from verifier.pld.checkin import checkin_fmt_pair

    pair, improved = checkin_fmt_pair(1.0, 0.0, 12, 0.3, 1e-4)
    for eps in (0.05, 0.3):
        assert rr_checkin_delta(12, 0.3, 1.0, eps) <= float(pair.delta(eps, Direction.REMOVE).upper) + ORACLE_ATOL
    from verifier.pairs import ApproxDP

    fmt, improved = checkin_fmt_pair(1.0, 1e-9, 5000, 0.2, 1e-6)
    assert improved > 100
    # without FMT every k near the mean n·γ gives (ln(1 + 0.2(e − 1)), 0.2·δ0) = (0.296, 2e-10)
    fallback = ApproxDP(math.log1p(0.2 * math.expm1(1.0)), 2e-10)
    assert float(fmt.delta(0.1, Direction.REMOVE).upper) < 0.01 * float(fallback.delta(0.1, Direction.REMOVE).upper)


@pytest.mark.slow
def test_gaussian_checkin_with_shuffle_aggregation_certified_beyond_subsampling_alone():
    """Issue 27 done-when 3: σ = 8, Δ = 1 (pair sensitivity 2), n = 1000, γ = 0.1, δ = 1e-5. The rdp
    method (subsampling, one report post-processed) gives ε <= 0.248; checkin-fmt (FMT's clone bound
    per k with Thm 3.8's coupling at a Gaussian ε0) gives ε <= 0.166, so a claim at 0.2 is CERTIFIED,
    and the specific-pair LOWER bound stays below it."""
    claim = {"mechanism": {"name": "gaussian", "sigma": 8.0, "sensitivity": 1.0},
             "scheme": {"name": "checkin", "users": 1000, "rate": 0.1, "aggregation": "shuffle"},
             "neighboring": "replace_one", "epsilon": 0.2, "delta": 1e-5}
    outcome = certify(parse_claim(claim))
    assert outcome.verdict is Verdict.CERTIFIED
    pair = Gaussian(8.0, 2.0)
    lower = checkin_delta_lower(pair, 1000, 0.1, 1, 0.2, Direction.REMOVE)
    assert lower <= 1e-5
