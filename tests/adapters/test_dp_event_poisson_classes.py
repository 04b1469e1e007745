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
from verifier.schemes import Poisson, SampledZCDP, ZCDP

mpmath.mp.dps = 30
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
