"""DiscreteGaussianDpEvent (dp_accounting's main branch): the pair N_ℤ(1, σ²) against N_ℤ(0, σ²),
checked against direct mpmath sums over a much wider support than the pair's, its T-fold composition
against the exact law of a sum of discrete Gaussians (a convolution of pmfs), and its continuous
limit. Events in JSON form, so these run without dp_accounting."""

from __future__ import annotations

import json

import mpmath
import pytest
from flint import arb

from verifier.adapters import from_dp_event
from verifier.certify.verdict import Verdict, certify
from verifier.cli import main
from verifier.pairs import DiscreteGaussian

MPMATH_DPS = 40  # working precision of this module's tests (tests/conftest.py)


def ev(name: str, **fields) -> dict:
    return {"module_name": "dp_accounting.dp_event", "class_name": name, **fields}


def dg(sigma: float, **fields) -> dict:
    return ev("DiscreteGaussianDpEvent", sigma=sigma, **{"sensitivity": 1.0, "dimension": 1, **fields})


def pmf(sigma: float, reach: int) -> dict[int, mpmath.mpf]:
    """N_ℤ(0, σ²) on |x| <= reach, normalised over that support (the rest is below e^{-reach²/(2σ²)})."""
    w = {x: mpmath.e ** (-mpmath.mpf(x) ** 2 / (2 * mpmath.mpf(sigma) ** 2)) for x in range(-reach, reach + 1)}
    z = mpmath.fsum(w.values())
    return {x: v / z for x, v in w.items()}


def reference(sigma: float, epsilon: float, times: int = 1) -> mpmath.mpf:
    """δ(ε) of T steps: the loss of a step at x is (1 − 2x)/(2σ²), so the composed loss is
    (T − 2S)/(2σ²) with S the sum of T independent N_ℤ(0, σ²); δ = E[(1 − e^{ε − L})_+]."""
    law = pmf(sigma, int(20 * sigma) + 20)
    total = {0: mpmath.mpf(1)}
    for _ in range(times):
        step: dict[int, mpmath.mpf] = {}
        for s, a in total.items():
            for x, b in law.items():
                step[s + x] = step.get(s + x, 0) + a * b
        total = step
    two_var = 2 * mpmath.mpf(sigma) ** 2
    return mpmath.fsum(m * max(0, 1 - mpmath.e ** (epsilon - (times - 2 * s) / two_var)) for s, m in total.items())


def bracket(event: dict, epsilon: float, only=None, delta: float = 0.5):
    """verifier's bracket on δ(ε); a claimed δ near the true one makes certify refine it."""
    return certify(from_dp_event(event, epsilon=epsilon, delta=delta), only=only).delta.combined


@pytest.mark.parametrize("sigma, epsilon", [(0.3, 0.0), (0.5, 1.0), (1.0, -0.5), (1.0, 2.0), (4.0, 0.1), (4.0, 1.5)])
def test_one_step_against_mpmath(sigma, epsilon):
    """Catches a lost normalisation (the pmf's Z), the continuous Gaussian as a stand-in (0.5, 1.0:
    0.510 against the discrete 0.603), a shift of 2, and a tail left out of the bracket."""
    want = reference(sigma, epsilon)
    got = bracket(dg(sigma), epsilon, only=["exact"])
    assert got.lower <= want <= got.upper and got.upper - got.lower <= 1e-13 * want + 1e-40


def test_tails_are_inside_the_balls():
    """The pair's own balls hold the mpmath sum over |x| <= 40σ + 40 (the pair keeps ~14σ)."""
    pair = DiscreteGaussian(0.7)
    for epsilon in (0.0, 0.4, 3.0):
        ball = pair._delta_arb(arb(epsilon))
        assert ball.lower() <= arb(str(reference(0.7, epsilon))) <= ball.upper()


def test_composition_against_the_law_of_the_sum():
    """10 steps, σ = 2: the PLD engine's bracket holds the exact sum (a convolution of pmfs)."""
    want = reference(2.0, 3.0, times=10)
    got = bracket(ev("SelfComposedDpEvent", event=dg(2.0), count=10), 3.0, delta=float(want))
    assert got.lower <= want <= got.upper and got.upper - got.lower <= 1e-6 * want


def test_large_sigma_approaches_the_continuous_gaussian():
    """The gap to the Gaussian with Δ/σ = 1/σ shrinks as σ grows (about 1/(24σ²) relative here: the
    loss lives on a lattice of step 1/σ²), and is large at σ = 0.5."""
    for epsilon in (0.0, 0.01):
        gaps = [abs(bracket(dg(s), epsilon, only=["exact"]).upper / gaussian_delta(1 / s, epsilon) - 1) for s in (10.0, 40.0)]
        assert gaps[1] <= 1e-4 and gaps[1] < gaps[0] / 8
    assert bracket(dg(0.5), 1.0, only=["exact"]).upper > 1.1 * gaussian_delta(2.0, 1.0)  # 0.603 against 0.510


def gaussian_delta(mu: float, epsilon: float) -> float:
    """The continuous Gaussian's δ(ε) at Δ/σ = μ: Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ) (Balle & Wang 2018)."""
    mu, epsilon = mpmath.mpf(mu), mpmath.mpf(epsilon)
    return float(mpmath.ncdf(mu / 2 - epsilon / mu) - mpmath.e**epsilon * mpmath.ncdf(-mu / 2 - epsilon / mu))


@pytest.mark.parametrize(
    "event, named",
    [
        (ev("DiscreteGaussianDpEvent", sigma=1.0), "dimension"),
        (dg(1.0, dimension=3), "dimension"),
        (dg(1.0, sensitivity=2.0), "sensitivity"),
        (dg(-1.0), "sigma"),
        (dg(1e6), "sigma"),
        (ev("DiscreteGaussianDpEvent", dimension=1), "sigma"),
    ],
)
def test_malformed_exit_2_with_one_line(event, named, tmp_path, capsys):
    path = tmp_path / "event.json"
    path.write_text(json.dumps(event))
    code = main(["certify", "--dp-event", str(path), "--epsilon", "1", "--delta", "1e-5"])
    err = capsys.readouterr().err
    assert code == 2 and named in err and len(err.strip().splitlines()) == 1, err


def test_replace_one_exits_2(tmp_path, capsys):
    """A replacement can move an integer query by 2: only add/remove is modelled."""
    path = tmp_path / "event.json"
    path.write_text(json.dumps(dg(1.0)))
    code = main(["certify", "--dp-event", str(path), "--epsilon", "1", "--delta", "1e-5", "--neighboring", "replace_one"])
    assert code == 2 and len(capsys.readouterr().err.strip().splitlines()) == 1


def test_certify_decides_both_sides():
    """σ = 2 alone: δ(1) = 0.0072488 (the mpmath sum): a claim of δ = 0.0073 is CERTIFIED, 0.0072 VIOLATED."""
    assert float(reference(2.0, 1.0)) == pytest.approx(0.0072487768, rel=1e-8)
    assert certify(from_dp_event(dg(2.0), epsilon=1.0, delta=0.0073)).verdict is Verdict.CERTIFIED
    assert certify(from_dp_event(dg(2.0), epsilon=1.0, delta=0.0072)).verdict is Verdict.VIOLATED
