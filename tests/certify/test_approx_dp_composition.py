"""Optimal composition of generic (ε₀, δ₀)-DP steps (issue 13, "Done when" line 1).

The reference is the Kairouz–Oh–Viswanath closed form (Steinke 2022, §7; notes §7 / D9), computed
here with mpmath at 50 digits:

    δ_opt(ε) = 1 − (1−δ₀)^T + (1−δ₀)^T (1+e^{ε₀})^{−T} Σ_l C(T,l) e^{lε₀} max(0, 1 − e^{ε−(2l−T)ε₀}),

itself checked against the notes' reference values (§10.1, §10.7) and, for T = 2, 3, by brute
force over the product pair in proofs/approx_dp.py. The PLD engine composes ApproxDP exactly up
to its grid, so its bracket must contain δ_opt (a wrong pair or a composition that loses the mass
at +∞ falls outside); basic and advanced composition (Steinke 2022, Thm 1 / Thm 22) must lie
above it (a sign slip in Thm 22 falls below).
"""

import json
import math
import subprocess
import sys

import mpmath as mp
import pytest

from verifier import Direction, InvalidArgument, Measure
from verifier.certify.methods.composition import AdvancedComposition, BasicComposition
from verifier.certify.methods.exact import KOV_MAX_TIMES, ExactPair
from verifier.certify.registry import methods_for
from verifier.cli import main
from verifier.pairs import ApproxDP
from verifier.pld import scheme_pld
from verifier.schemes import Composed, Single

DPS = 50
E0, D0 = 0.5, 1e-6
#: ε at which δ is compared for T = 10 and 100 (inside the support of the composed loss: δ is
#: neither the trivial 1 − (1 − δ₀)^T nor ~1), and δ at which ε is compared (above the mass at +∞).
DELTA_POINTS = {10: (0.5, 1.25, 2.0, 3.0, 4.0), 100: (3.0, 5.0, 10.0, 20.0, 30.0)}
EPSILON_TARGETS = {10: (1e-4, 1e-3, 0.05), 100: (1e-3, 1e-2)}
#: Grid step of the PLD brackets (ε₀ = 0.5 lies on it).
STEP = 2.0**-12


def kov_delta(steps: int, e0: float, d0: float, eps) -> mp.mpf:
    """The KOV optimal-composition δ at ε (module docstring), at DPS digits."""
    with mp.workdps(DPS):
        e0, d0, eps = mp.mpf(e0), mp.mpf(d0), mp.mpf(eps)
        total = mp.fsum(
            mp.binomial(steps, l) * mp.exp(l * e0) * max(mp.mpf(0), -mp.expm1(eps - (2 * l - steps) * e0))
            for l in range(steps + 1)
        )
        kept = (1 - d0) ** steps
        return 1 - kept + kept * total / (1 + mp.exp(e0)) ** steps


def kov_epsilon(steps: int, e0: float, d0: float, delta: float) -> mp.mpf:
    """Smallest ε with δ_opt(ε) <= δ, by bisection on the non-increasing δ_opt (to 1e-30)."""
    with mp.workdps(DPS):
        lo, hi = mp.mpf(-1), mp.mpf(steps * e0)
        while hi - lo > mp.mpf("1e-30"):
            mid = (lo + hi) / 2
            lo, hi = (lo, mid) if kov_delta(steps, e0, d0, mid) <= delta else (mid, hi)
        return hi


def test_reference_matches_the_notes_values():
    """Notes §10.7 (KOV vs brute force) and §10.1 (optimal column, 0.1-DP, δ = 1e-6)."""
    for (e0, k, d0, eps), value in [
        ((0.5, 3, 0.01, 0.4), "0.226338185880954"),
        ((1.0, 4, 0.001, 1.5), "0.429854122008713"),
        ((0.2, 5, 0.0, 0.3), "0.0786158229115876"),
        ((0.3, 2, 0.05, 0.0), "0.231868742845044"),
    ]:
        assert abs(kov_delta(k, e0, d0, eps) - mp.mpf(value)) < 1e-14
    for k, value in [(10, "0.99937091"), (100, "4.7745676")]:
        assert abs(kov_epsilon(k, 0.1, 0.0, 1e-6) - mp.mpf(value)) < 1e-7


@pytest.fixture(scope="module", params=[10, 100])
def composed(request):
    steps = request.param
    scheme = Composed(Single(ApproxDP(E0, D0)), steps)
    return steps, scheme, {d: scheme_pld(scheme, d, step=STEP) for d in Direction}


def test_pld_bracket_contains_the_kov_delta(composed):
    steps, scheme, brackets = composed
    for eps in DELTA_POINTS[steps]:
        exact = float(kov_delta(steps, E0, D0, eps))
        for direction, bracket in brackets.items():
            got = bracket.delta(eps)
            assert got.lower <= exact <= got.upper, (steps, eps, direction, got, exact)
            assert got.upper - got.lower <= 1e-3 * exact  # the optimal value, not just some bound


def test_pld_bracket_contains_the_kov_epsilon_and_advanced_composition_is_above(composed):
    steps, scheme, brackets = composed
    advanced, basic = AdvancedComposition(), BasicComposition()
    for delta in EPSILON_TARGETS[steps]:
        exact = float(kov_epsilon(steps, E0, D0, delta))
        for direction, bracket in brackets.items():
            got = bracket.epsilon(delta)
            assert got.lower <= exact <= got.upper, (steps, delta, direction, got, exact)
            (adv,) = advanced.epsilon_bounds(scheme, delta, direction)
            assert adv.value > got.upper
            assert [b.value for b in basic.epsilon_bounds(scheme, delta, direction)] == [steps * E0]
    for eps in DELTA_POINTS[steps]:
        exact = kov_delta(steps, E0, D0, eps)
        for bound in advanced.delta_bounds(scheme, eps, Direction.ADD):
            assert bound.value >= exact


def test_exact_method_is_the_kov_sum(composed):
    """The exact method's bracket of the grouped product pair (pairs.ApproxDPComposition) is the KOV
    value to float accuracy in both directions (a wrong binomial weight or a lost ⊥ mass shows)."""
    steps, scheme, _ = composed
    exact = ExactPair()
    for direction in Direction:
        for eps in DELTA_POINTS[steps]:
            lower, upper = (b.value for b in exact.delta_bounds(scheme, eps, direction))
            reference = kov_delta(steps, E0, D0, eps)
            assert lower <= reference <= upper and upper - lower <= 1e-14 * reference
        for delta in EPSILON_TARGETS[steps]:
            lower, upper = (b.value for b in exact.epsilon_bounds(scheme, delta, direction))
            assert lower <= kov_epsilon(steps, E0, D0, delta) <= upper and upper - lower <= 1e-12 * upper


def test_grouped_product_pair_laws_and_limits():
    pair = ApproxDP(0.5, 0.1).composed(3)
    with mp.workdps(DPS):
        p = [kov_mass(3, l) for l in range(4)]  # losses −1.5, −0.5, 0.5, 1.5
        below, above = p[0] + p[1], p[3] + 1 - (1 - mp.mpf(0.1)) ** 3  # +∞ counts above
        got = pair.loss_cdf_bracket(0.0, Direction.REMOVE, Measure.P)
        assert got.lower <= below <= got.upper
        got = pair.loss_sf_bracket(1.0, Direction.REMOVE, Measure.P)
        assert got.lower <= above <= got.upper
    assert pair.renyi(2.0, Direction.ADD).lower == math.inf
    assert ApproxDP(0.5, 0.0).composed(3).renyi(2.0, Direction.ADD).contains(3 * ApproxDP(0.5, 0.0).renyi(2.0, Direction.ADD).upper)
    assert ExactPair().supports(Composed(Single(ApproxDP(0.5, 0.0)), KOV_MAX_TIMES))
    assert not ExactPair().supports(Composed(Single(ApproxDP(0.5, 0.0)), KOV_MAX_TIMES + 1))
    with pytest.raises(InvalidArgument, match="^times="):
        ApproxDP(0.5, 0.0).composed(0)


def kov_mass(steps: int, l: int) -> mp.mpf:
    """P-mass of loss (2l − T)ε₀ in the T-fold product of ApproxDP(0.5, 0.1)."""
    with mp.workdps(DPS):
        e = mp.exp(mp.mpf(0.5))
        return (1 - mp.mpf(0.1)) ** steps * mp.binomial(steps, l) * e**l / (1 + e) ** steps


def test_advanced_composition_matches_the_notes_value():
    """Notes §10.7: Thm 22 with k = 100, ε_j = 0.1, δ_j = 1e-8, δ = 1e-5 gives ε = 5.32043275664;
    solved back for δ at that ε it returns 1e-5."""
    scheme = Composed(Single(ApproxDP(0.1, 1e-8)), 100)
    (eps,) = AdvancedComposition().epsilon_bounds(scheme, 1e-5, Direction.REMOVE)
    assert 5.32043275664 - 1e-10 <= eps.value <= 5.32043275664 + 1e-10
    (delta,) = AdvancedComposition().delta_bounds(scheme, 5.32043275664, Direction.REMOVE)
    assert delta.value == pytest.approx(1e-5, rel=1e-9)
    assert AdvancedComposition().epsilon_bounds(scheme, 1e-6, Direction.REMOVE) == []  # δ <= Tδ₀: nothing
    assert AdvancedComposition().delta_bounds(scheme, 0.4, Direction.REMOVE) == []  # ε <= S/2: nothing


def test_basic_composition_rounds_up_and_is_silent_below_its_threshold():
    scheme = Composed(Composed(Single(ApproxDP(0.1, 1e-8)), 10), 10)  # nested: T = 100
    (eps,) = BasicComposition().epsilon_bounds(scheme, 2e-6, Direction.ADD)
    assert eps.value >= 100 * mp.mpf(0.1) and eps.value == pytest.approx(10.0, rel=1e-15)
    (delta,) = BasicComposition().delta_bounds(scheme, 10.0 + 1e-9, Direction.ADD)
    assert delta.value >= 100 * mp.mpf(1e-8)
    assert BasicComposition().epsilon_bounds(scheme, 1e-7, Direction.ADD) == []
    assert BasicComposition().delta_bounds(scheme, 9.0, Direction.ADD) == []


def test_methods_are_registered_for_approx_dp_compositions_only():
    names = {m.name for m in methods_for(Composed(Single(ApproxDP(0.5, 1e-6)), 3))}
    assert {"basic-composition", "advanced-composition", "pld"} <= names
    from verifier.pairs import Gaussian

    assert not {"basic-composition", "advanced-composition"} & {m.name for m in methods_for(Composed(Single(Gaussian(1.0)), 3))}


def test_certify_cli_decides_an_approx_dp_composition(capsys):
    """100 (0.5, 1e-6)-DP steps at δ = 1e-3: KOV gives ε ≈ 26.07, advanced composition ≈ 31.2, so a
    claim ε = 28 holds only through the optimal composition (exit 0) and ε = 24 fails (exit 1)."""
    scheme = Composed(Single(ApproxDP(E0, D0)), 100)
    assert 24.0 < float(kov_epsilon(100, E0, D0, 1e-3)) < 28.0 < AdvancedComposition().epsilon_bounds(scheme, 1e-3, Direction.ADD)[0].value
    flags = ["certify", "--mechanism", "approx_dp", "--epsilon0", "0.5", "--delta0", "1e-6", "--scheme", "composed", "--times", "100"]
    assert main([*flags, "--epsilon", "28", "--delta", "1e-3", "--json"]) == 0
    cert = json.loads(capsys.readouterr().out)
    assert cert["verdict"] == "CERTIFIED" and cert["claim"]["mechanism"] == {"name": "approx_dp", "epsilon0": 0.5, "delta0": 1e-6}
    assert main([*flags, "--epsilon", "24", "--delta", "1e-3"]) == 1


@pytest.mark.parametrize(
    "flags, field",
    [(["--epsilon0", "0.5", "--delta0", "1"], "delta0"), (["--epsilon0", "0.5", "--delta0", "-0.1"], "delta0"),
     (["--epsilon0", "-0.5", "--delta0", "1e-6"], "epsilon0"), (["--epsilon0", "0.5"], "delta0")],
)
def test_bad_step_parameters_exit_2_with_one_line(flags, field, capsys):
    argv = ["certify", "--mechanism", "approx_dp", *flags, "--scheme", "composed", "--times", "3", "--epsilon", "1", "--delta", "1e-5"]
    assert main(argv) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and f"{field}=" in lines[0], lines


def test_bad_step_parameter_in_a_subprocess_has_no_traceback():
    out = subprocess.run(
        [sys.executable, "-m", "verifier", "epsilon", "--mechanism", "approx_dp", "--epsilon0", "0.5", "--delta0", "1",
         "--delta", "1e-5"],
        capture_output=True, text=True, check=False,
    )
    assert out.returncode == 2 and out.stderr.strip().count("\n") == 0 and "delta0=1.0" in out.stderr, out.stderr


def test_every_method_declares_the_schemes_it_supports_for_approx_dp():
    """The coverage contract (tests/certify/test_scheme_coverage.py) for the new pair, in every scheme."""
    from verifier.certify.registry import all_methods
    from verifier.schemes import Allocation, Poisson

    pair = ApproxDP(0.5, 1e-6)
    samples = [Single(pair), Composed(Single(pair), 3), Poisson(pair, 0.01, 10), Allocation(pair, 10, 2, 2)]
    for method in all_methods():
        for scheme in samples:
            if method.supports(scheme):
                assert type(scheme) in method.scheme_types, (method.name, scheme)
