"""Poisson-sampled classes (issue 25): ``PoissonSampledDpEvent(q, ZCDpEvent)`` (UPPER: the unsampled
ξ + ρα per step, valid because sampling never increases D_α; LOWER: the Poisson-sampled Gaussian
member). References are computed here in mpmath by quadrature, independently of verifier."""

from __future__ import annotations

import mpmath
import pytest

from verifier._types import Direction, Quantity
from verifier.adapters import from_dp_event
from verifier.certify.portfolio import collect_bounds
from verifier.cli import main
from verifier.rdp import curve_for
import math

from verifier.pairs import Gaussian
from verifier.schemes import Poisson, RepeatAndSelect, SampledZCDP, Single, ZCDP

MPMATH_DPS = 30  # working precision of this module's tests (tests/conftest.py)
BOTH = (Direction.ADD, Direction.REMOVE)


def ev(name: str, **fields) -> dict:
    return {"module_name": "dp_accounting.dp_event", "class_name": name, **fields}


def sampled_pair(mu, q):
    """Densities of the Poisson-sampled Gaussian pair (add/remove): (1 − q)N(0, 1) + qN(μ, 1) and N(0, 1)."""
    mu, q = mpmath.mpf(mu), mpmath.mpf(q)
    a = lambda x: mpmath.npdf(x)  # noqa: E731
    p = lambda x: (1 - q) * mpmath.npdf(x) + q * mpmath.npdf(x, mu)  # noqa: E731
    return p, a


def renyi(p, a, alpha) -> mpmath.mpf:
    """D_α(p‖a) = ln(∫p^α a^{1−α})/(α − 1) by quadrature over the real line."""
    alpha = mpmath.mpf(alpha)
    integral = mpmath.quad(lambda x: p(x) ** alpha * a(x) ** (1 - alpha), [-mpmath.inf, -10, 0, 10, 40, mpmath.inf])
    return mpmath.log(integral) / (alpha - 1)


@pytest.mark.parametrize("alpha", [1.5, 2.0, 8.0])
@pytest.mark.parametrize("q", [0.01, 0.3, 0.9])
def test_sampling_never_increases_renyi_divergence(alpha, q):
    """The joint-convexity argument of verifier.rdp.classes, numerically: D_α of the sampled Gaussian
    pair, in both orders, is at most the unsampled α·μ²/2 = ρα; and verifier's SampledZCDP curve is
    ρα itself (not an amplified value, which this bound does not prove). A curve that applied
    amplification (e.g. q²ρα) would fall below the quadrature value at q = 0.9 and fail."""
    rho = mpmath.mpf("0.5")
    mu = mpmath.sqrt(2 * rho)
    p, a = sampled_pair(mu, q)
    unsampled = rho * alpha
    for d in (renyi(p, a, alpha), renyi(a, p, alpha)):
        assert 0 <= d <= unsampled
    for direction in BOTH:
        got = curve_for(SampledZCDP(ZCDP(0.5), q, 3), [alpha], direction).values[0]
        assert 3 * unsampled <= got <= 3 * unsampled * (1 + 1e-12)


def sampled_gaussian_delta(mu, q, epsilon) -> mpmath.mpf:
    """δ(ε) of the sampled Gaussian pair, the worse order, in closed form: the privacy loss is monotone
    in x, so each hockey-stick integral is a tail past the crossing. Remove: (1 − q) + q·e^{μx − μ²/2}
    > e^ε past x₀; add: e^ε((1 − q) + q·e^{μx − μ²/2}) < 1 before x₁ (only when e^{−ε} > 1 − q)."""
    mu, q, eps = mpmath.mpf(mu), mpmath.mpf(q), mpmath.mpf(epsilon)
    e = mpmath.e**eps
    x0 = (mpmath.log((e - 1 + q) / q) + mu**2 / 2) / mu
    remove = (1 - q) * mpmath.ncdf(-x0) + q * mpmath.ncdf(mu - x0) - e * mpmath.ncdf(-x0)
    add = mpmath.mpf(0)
    if 1 / e > 1 - q:
        x1 = (mpmath.log((1 / e - 1 + q) / q) + mu**2 / 2) / mu
        add = mpmath.ncdf(x1) - e * ((1 - q) * mpmath.ncdf(x1) + q * mpmath.ncdf(x1 - mu))
    return max(remove, add)


@pytest.mark.parametrize("rho, q, epsilon", [(0.5, 0.2, 0.5), (2.0, 0.5, 1.0)])
def test_sampled_zcdp_event_bracket(rho, q, epsilon):
    """PoissonSampledDpEvent(q, ZCDpEvent(ρ)) maps to SampledZCDP; its δ(ε) bracket holds the
    member's δ (the sampled Gaussian with μ = √(2ρ), closed form, the worse of the two orders):
    lower end within 1e-4 below it (the member is this exact mechanism), upper end above it."""
    claim = from_dp_event(ev("PoissonSampledDpEvent", sampling_probability=q, event=ev("ZCDpEvent", rho=rho, xi=0.0)), epsilon=epsilon, delta=1e-5)
    assert claim.model == SampledZCDP(ZCDP(rho), q, 1)
    member = sampled_gaussian_delta(mpmath.sqrt(2 * mpmath.mpf(rho)), q, epsilon)
    got = collect_bounds(claim.model, Quantity.DELTA, epsilon, BOTH).combined
    assert member * (1 - 1e-4) <= got.lower <= member * (1 + 1e-9)
    assert got.upper >= member


def test_member_is_the_sampled_gaussian():
    """The lower side bounds the Poisson-sampled Gaussian, not the unsampled one (which would be no
    member of the sampled class and could give a lower end above the truth)."""
    from verifier.certify.methods.member import member

    model = SampledZCDP(ZCDP(0.5), 0.1, 7)
    got = member(model)
    assert isinstance(got, Poisson) and got.rate == 0.1 and got.steps == 7 and got.pair.sensitivity**2 <= 1.0


@pytest.mark.parametrize(
    "scheme, neighboring",
    [({"name": "poisson", "rate": 0.1, "steps": 3}, "replace_one"), ({"name": "allocation", "steps": 10}, "add_or_remove")],
)
def test_other_samplings_of_zcdp_exit_2(scheme, neighboring, tmp_path, capsys):
    path = tmp_path / "claim.json"
    import json

    path.write_text(json.dumps({"scheme": scheme, "mechanism": {"name": "zcdp", "rho": 0.5}, "epsilon": 1.0, "delta": 1e-5, "neighboring": neighboring}))
    assert main(["certify", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "zcdp" in err


# ---- repeat-and-select with Poisson-distributed runs (shape = ∞) --------------------------------------


def gaussian_delta(mu, epsilon) -> mpmath.mpf:
    """δ(ε) of N(μ, 1) against N(0, 1): Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ) (Balle & Wang 2018)."""
    mu, eps = mpmath.mpf(mu), mpmath.mpf(epsilon)
    return mpmath.ncdf(mu / 2 - eps / mu) - mpmath.e**eps * mpmath.ncdf(-mu / 2 - eps / mu)


def rdp_delta_optimum(rho, epsilon) -> mpmath.mpf:
    """inf over α > 1 of e^{(α−1)(αρ − ε)}/α·(1 − 1/α)^{α−1} (Canonne, Kamath & Steinke 2020, Prop 12 on
    the Gaussian's curve ρα), by a fine grid in mpmath."""
    rho, eps = mpmath.mpf(rho), mpmath.mpf(epsilon)
    grid = [1 + mpmath.mpf(k) / 200 for k in range(1, 200 * 40)]
    return min(mpmath.mpf(1), min(mpmath.e ** ((a - 1) * (a * rho - eps)) / a * (1 - 1 / a) ** (a - 1) for a in grid))


def theorem6(sigma, mean, order, delta_hat) -> mpmath.mpf:
    """Papernot & Steinke 2022, Thm 6 for a Gaussian run (ε(λ) = λ/(2σ²)): ε + μ·δ̂ + ln(μ)/(λ − 1)."""
    lam = mpmath.mpf(order)
    return lam / (2 * mpmath.mpf(sigma) ** 2) + mean * delta_hat + mpmath.log(mean) / (lam - 1)


@pytest.mark.parametrize("sigma, mean", [(1.0, 10.0), (2.0, 3.0)])
@pytest.mark.parametrize("order", [1.5, 2.0, 4.0, 16.0])
def test_poisson_runs_curve_is_theorem6(sigma, mean, order):
    """verifier's Thm 6 value at one order (no cap by other orders) between two mpmath evaluations of
    the theorem: below, with the run's exact δ at the largest ε̂ the condition allows, ln(λ/(λ − 1))
    (no valid (ε̂, δ̂) gives less); above, with the RDP-conversion optimum δ at the smallest ε̂ of
    verifier's ladder, ln(1 + 2^{−1/64}/(λ − 1)), plus 0.1%. Catches μ·δ̂ dropped (below the lower
    reference by μ·δ ≈ 0.1-2 here), ln(μ) over λ, and an ε̂ above the condition."""
    rho = 1 / (2 * mpmath.mpf(sigma) ** 2)
    lam = mpmath.mpf(order)
    low = theorem6(sigma, mean, order, gaussian_delta(1 / mpmath.mpf(sigma), mpmath.log(lam / (lam - 1))))
    high = theorem6(sigma, mean, order, rdp_delta_optimum(rho, mpmath.log(1 + 2 ** (-mpmath.mpf(1) / 64) / (lam - 1))))
    for direction in BOTH:
        got = curve_for(RepeatAndSelect(Single(Gaussian(sigma)), mean, math.inf), [order], direction).values[0]
        assert low <= got <= high * (1 + 1e-3), (float(low), got, float(high))


@pytest.mark.peer
def test_poisson_runs_against_dp_accounting():
    """dp_accounting's RDP accountant implements Thm 6 with ε̂ = ln(1 + 1/(λ − 1)) and δ̂ from its own
    conversion on its orders. Its ε(δ) must lie at or above verifier's lower end (sound), and verifier's
    upper end is within 1% of it (verifier's δ̂ comes from a fractional-order search, dp_accounting's
    from its order grid)."""
    dp_event = pytest.importorskip("dp_accounting.dp_event")
    from dp_accounting.rdp import rdp_privacy_accountant

    from verifier._types import Quantity

    for sigma, mean in ((1.0, 10.0), (2.0, 3.0)):
        event = dp_event.RepeatAndSelectDpEvent(dp_event.GaussianDpEvent(sigma), mean, math.inf)
        accountant = rdp_privacy_accountant.RdpAccountant()
        accountant.compose(event)
        eps = accountant.get_epsilon(1e-5)
        claim = from_dp_event(event, epsilon=eps, delta=1e-5)
        bracket = collect_bounds(claim.model, Quantity.EPSILON, 1e-5, BOTH).combined
        assert bracket.lower <= eps <= bracket.upper * 1.01 and bracket.upper <= eps * 1.01, (bracket, eps)


def test_poisson_runs_inside_a_composition_have_only_an_upper_side():
    """Composed Poisson-run repeat-and-selects: the lower side declines with one reason (the member
    would be the common-atom mixture, which no method composes); the upper side is Thm 6 composed."""
    from verifier.certify.methods.member import Member
    from verifier.errors import NotApplicable
    from verifier.schemes import Composed

    scheme = Composed(RepeatAndSelect(Single(Gaussian(2.0)), 10.0, math.inf), 2)
    with pytest.raises(NotApplicable, match="Poisson runs"):
        Member().delta_bounds(scheme, 1.0, Direction.REMOVE)
    bracket = collect_bounds(scheme, Quantity.DELTA, 10.0, BOTH).combined
    assert bracket.lower == 0.0 and bracket.upper < 1e-3
