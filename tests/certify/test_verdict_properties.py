"""Soundness of verdicts on random claims about single mechanisms: a CERTIFIED claim is true and a
VIOLATED claim is false according to the mpmath reference integrals/sums (an independent oracle),
and a claim a factor of 2 away from the truth is always decided."""

import mpmath
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from verifier.certify.claim import parse_claim
from verifier.certify.verdict import Verdict, certify
from verifier.reference.pairs import gaussian_delta, laplace_delta, rr_delta

#: Claimed δ = truth × factor: far below/above (must be decided) and within 1e-9 relative (either
#: verdict or INCONCLUSIVE, but never a wrong one).
FACTORS = [0.5, 1 - 1e-9, 1 + 1e-9, 2.0]
#: The references work at 50 digits, so a true δ of 0 can come out as ~1e-60 (e.g. RR at ε = ε0):
#: claims below this floor say nothing about the verdict's soundness and are skipped.
REFERENCE_FLOOR = 1e-40
#: The verdict rule is tested on the closed-form bounds (microseconds); the other methods' own
#: soundness is their test suites' job, and running them on every example would take minutes.
CLOSED_FORM = ["exact"]
#: The Gaussian reference integrates numerically (~0.3 s per call): fewer examples keep this quick.
GAUSSIAN_EXAMPLES = 12


def check(mechanism, epsilon, factor, truth):
    assume(truth > REFERENCE_FLOOR)
    delta = float(truth * factor)
    assume(0.0 < delta < 1.0)
    claim = parse_claim({"mechanism": mechanism, "scheme": {"name": "single"}, "epsilon": epsilon, "delta": delta})
    verdict = certify(claim, only=CLOSED_FORM).verdict
    if verdict is Verdict.CERTIFIED:
        assert truth <= mpmath.mpf(delta)
    if verdict is Verdict.VIOLATED:
        assert truth > mpmath.mpf(delta)
    if factor in (0.5, 2.0):
        assert verdict is (Verdict.VIOLATED if factor < 1 else Verdict.CERTIFIED)


@settings(max_examples=GAUSSIAN_EXAMPLES)
@given(sigma=st.floats(0.3, 5.0), epsilon=st.floats(-1.0, 6.0), factor=st.sampled_from(FACTORS))
def test_gaussian_verdicts_are_sound(sigma, epsilon, factor):
    truth = gaussian_delta(sigma, epsilon, "remove")  # the Gaussian pair is symmetric
    check({"name": "gaussian", "sigma": sigma}, epsilon, factor, truth)


@given(scale=st.floats(0.2, 5.0), epsilon=st.floats(-1.0, 4.0), factor=st.sampled_from(FACTORS))
def test_laplace_verdicts_are_sound(scale, epsilon, factor):
    truth = max(laplace_delta(scale, epsilon, d) for d in ("add", "remove"))
    check({"name": "laplace", "scale": scale}, epsilon, factor, truth)


@given(epsilon0=st.floats(0.1, 4.0), k=st.integers(2, 6), epsilon=st.floats(-1.0, 4.0), factor=st.sampled_from(FACTORS))
def test_randomized_response_verdicts_are_sound(epsilon0, k, epsilon, factor):
    truth = max(rr_delta(epsilon0, epsilon, d, k=k) for d in ("add", "remove"))
    check({"name": "rr", "epsilon0": epsilon0, "k": k}, epsilon, factor, truth)
