"""ZCDpEvent and RepeatAndSelectDpEvent (issue 25): classes of mechanisms known through a Rényi
bound. Each bracket is held against references computed here in mpmath, independently of verifier:
the Gaussian's closed-form δ(ε) (the member: a LOWER bound that the bracket's lower end must equal),
the optimum of the zCDP → (ε, δ) conversion found as the root of its derivative, the truncated
negative binomial's mean as a brute-force sum of its pmf, and Papernot & Steinke's Thm 2 formula.
dp_accounting's RDP accountant is the peer (marked, skipped without it)."""

from __future__ import annotations

import json
import math

import mpmath
import pytest

from verifier._types import Direction, Quantity
from verifier.adapters import from_dp_event
from verifier.certify.claim import parse_claim
from verifier.certify.portfolio import collect_bounds
from verifier.certify.verdict import Verdict, certify
from verifier.cli import main
from verifier.pairs import Gaussian
from verifier.rdp import curve_for
from verifier.rdp.classes import SELECTION_ORDERS, tnb_gamma_lower, tnb_mean
from verifier.schemes import Composed, Poisson, RepeatAndSelect, Sequence, Single, ZCDP

MPMATH_DPS = 40  # working precision of this module's tests (tests/conftest.py)
BOTH = (Direction.ADD, Direction.REMOVE)

#: How far the UPPER end may sit above the optimum of the conversion (the method's order search).
CONVERSION_RTOL = 1e-6
#: How far the LOWER end may sit below the member's closed form (μ rounded down by an ulp, float δ).
MEMBER_RTOL = 1e-9


def ev(name: str, **fields) -> dict:
    return {"module_name": "dp_accounting.dp_event", "class_name": name, **fields}


def gaussian_delta(mu, epsilon) -> mpmath.mpf:
    """δ(ε) of N(μ, 1) against N(0, 1): Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ) (Balle & Wang 2018)."""
    mu, eps = mpmath.mpf(mu), mpmath.mpf(epsilon)
    return mpmath.ncdf(mu / 2 - eps / mu) - mpmath.e**eps * mpmath.ncdf(-mu / 2 - eps / mu)


def zcdp_delta_optimum(rho, xi, epsilon) -> mpmath.mpf:
    """inf over α > 1 of e^{(α−1)(ξ + αρ − ε)}/α·(1 − 1/α)^{α−1} (Canonne, Kamath & Steinke 2020,
    Prop 12 on the curve ξ + ρα): the log is convex in α with derivative ξ + (2α − 1)ρ − ε + ln(1 − 1/α),
    increasing, so its root (bisection) is the minimiser."""
    rho, xi, eps = mpmath.mpf(rho), mpmath.mpf(xi), mpmath.mpf(epsilon)
    slope = lambda a: xi + (2 * a - 1) * rho - eps + mpmath.log(1 - 1 / a)  # noqa: E731
    lo, hi = mpmath.mpf(1) + mpmath.mpf(10) ** -30, mpmath.mpf(2)
    while slope(hi) < 0:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if slope(mid) < 0 else (lo, mid)
    a = (lo + hi) / 2
    return min(mpmath.mpf(1), mpmath.e ** ((a - 1) * (xi + a * rho - eps)) / a * (1 - 1 / a) ** (a - 1))


def delta_bracket(scheme, epsilon):
    return collect_bounds(scheme, Quantity.DELTA, epsilon, BOTH).combined


@pytest.mark.parametrize("rho, epsilon", [(0.05, 0.5), (0.5, 2.0), (0.5, 4.0), (2.0, 6.0)])
def test_zcdp_step_bracket(rho, epsilon):
    """Lower end = the Gaussian member's closed form at μ = √(2ρ); upper end at the conversion's
    optimum. Catches μ = √ρ or 2ρ for the member (lower end off by orders of magnitude) and a
    conversion that drops the (1 − 1/α)^{α−1}/α factor (upper end above the optimum)."""
    got = delta_bracket(ZCDP(rho), epsilon)
    member = gaussian_delta(mpmath.sqrt(2 * mpmath.mpf(rho)), epsilon)
    optimum = zcdp_delta_optimum(rho, 0, epsilon)
    assert abs(got.lower - member) <= MEMBER_RTOL * member
    assert optimum <= got.upper <= optimum * (1 + CONVERSION_RTOL)


def test_zcdp_with_xi():
    """(ξ, ρ)-zCDP: the upper end is the conversion of ξ + ρα; the member is still the Gaussian of ρ."""
    got = delta_bracket(Composed(ZCDP(0.1, 0.05), 5), 3.0)
    optimum = zcdp_delta_optimum(0.5, 0.25, 3.0)
    assert optimum <= got.upper <= optimum * (1 + CONVERSION_RTOL)
    assert abs(got.lower - gaussian_delta(1.0, 3.0)) <= MEMBER_RTOL * got.lower


def test_zcdp_composed_with_gaussians():
    """A zCDP step then 20 Gaussian steps of σ = 4: the composition of Gaussians is the Gaussian of
    μ² = 2ρ + 20/16 (the member), and the Rényi curves add (upper end: the conversion at the total ρ)."""
    rho, sigma, m, epsilon = 0.3, 4.0, 20, 3.0
    scheme = Sequence((ZCDP(rho), Composed(Single(Gaussian(sigma)), m)))
    total = mpmath.mpf(rho) + m / (2 * mpmath.mpf(sigma) ** 2)
    got = delta_bracket(scheme, epsilon)
    assert abs(got.lower - gaussian_delta(mpmath.sqrt(2 * total), epsilon)) <= MEMBER_RTOL * got.lower
    optimum = zcdp_delta_optimum(total, 0, epsilon)
    assert optimum <= got.upper <= optimum * (1 + CONVERSION_RTOL)


def test_zcdp_event_claims_are_decided_on_both_sides():
    """CERTIFIED just above the upper end of ε(δ), VIOLATED just below the lower end; the event
    and its JSON form give the same claim."""
    event = ev("ComposedDpEvent", events=[ev("ZCDpEvent", rho=0.2, xi=0.0), ev("SelfComposedDpEvent", event=ev("GaussianDpEvent", noise_multiplier=2.0), count=10)])
    claim = from_dp_event(json.loads(json.dumps(event)), epsilon=1.0, delta=1e-5)
    bracket = collect_bounds(claim.model, Quantity.EPSILON, 1e-5, BOTH).combined
    assert 0 < bracket.lower <= bracket.upper <= bracket.lower * 1.2
    above = from_dp_event(event, epsilon=bracket.upper * 1.001, delta=1e-5)
    below = from_dp_event(event, epsilon=bracket.lower * 0.999, delta=1e-5)
    assert certify(above).verdict is Verdict.CERTIFIED
    assert certify(below).verdict is Verdict.VIOLATED


def test_zcdp_pure_dp_claim_is_violated():
    """A ρ-zCDP step is not ε-DP for any ε (its Gaussian member has unbounded loss)."""
    claim = from_dp_event(ev("ZCDpEvent", rho=0.01, xi=0.0), epsilon=50.0, delta=0.0)
    assert certify(claim).verdict is Verdict.VIOLATED


# ---- repeat-and-select -----------------------------------------------------------------------------


def tnb_pmf(eta, gamma, count: int) -> list:
    """Papernot & Steinke 2022, Def 1: P[K = k] of D_{η,γ} for k = 1 … count, i.e.
    (1 − γ)^k/(γ^{−η} − 1)·Π_{ℓ<k}(ℓ + η)/(ℓ + 1), or (1 − γ)^k/(k ln(1/γ)) at η = 0 (the product
    built up term by term)."""
    eta, gamma = mpmath.mpf(eta), mpmath.mpf(gamma)
    if eta == 0:
        return [(1 - gamma) ** k / (k * mpmath.log(1 / gamma)) for k in range(1, count + 1)]
    out, term = [], eta * (1 - gamma) / (gamma**-eta - 1)  # k = 1: (1 − γ)·η/(γ^{−η} − 1)
    for k in range(1, count + 1):
        out.append(term)
        term = term * (1 - gamma) * (k + eta) / (k + 1)
    return out


@pytest.mark.parametrize("eta, gamma", [(0.0, 0.1), (1.0, 0.2), (2.5, 0.05), (0.5, 0.3)])
def test_tnb_mean_is_the_mean_of_the_pmf(eta, gamma):
    """The closed-form mean against Σ k·P[K = k] summed until the tail is below 1e-60."""
    pmf = tnb_pmf(eta, gamma, 4000)
    total = mpmath.fsum(pmf)
    mean = mpmath.fsum(k * p for k, p in enumerate(pmf, start=1))
    assert abs(total - 1) < 1e-30
    from flint import arb

    got = tnb_mean(arb(gamma), eta)
    assert abs(float(got.mid()) - mean) <= 1e-14 * mean


@pytest.mark.parametrize("mean, shape", [(10.0, 0.0), (10.0, 1.0), (3.0, 2.5), (100.0, 0.5), (1.0, 1.0)])
def test_gamma_is_bracketed_from_below(mean, shape):
    """γ returned <= the root of E[K] = mean (so ln(1/γ) is an upper bound) and within 1e-12 of it."""
    gamma = tnb_gamma_lower(mean, shape)
    if mean == 1.0:
        assert gamma == 1.0
        return
    root = gamma_root(mean, shape)
    assert gamma <= root and gamma >= root * (1 - 1e-12)


def gamma_root(mean: float, shape: float) -> mpmath.mpf:
    """The γ of D_{η,γ} with E[K] = mean (Def 1's mean, decreasing in γ), by bisection in mpmath."""
    mp_mean = lambda g: (1 / g - 1) / mpmath.log(1 / g) if shape == 0 else shape * (1 - g) / (g * (1 - g**shape))  # noqa: E731
    lo, hi = mpmath.mpf(10) ** -30, mpmath.mpf(1) - mpmath.mpf(10) ** -30
    for _ in range(150):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if mp_mean(mid) > mean else (lo, mid)
    return lo


def theorem2(sigma: float, mean: float, shape: float, orders) -> list:
    """Papernot & Steinke 2022, Thm 2 for one Gaussian run (D_λ = λ/(2σ²) both ways), in mpmath:
    ε' = ε(λ) + (1 + η)·min_λ̂[(1 − 1/λ̂)ε(λ̂) + ln(1/γ)/λ̂] + ln(mean)/(λ − 1), λ̂ over 1 and the
    same grid as verifier; then capped by larger orders (monotonicity of D_λ)."""
    rdp = lambda a: mpmath.mpf(a) / (2 * mpmath.mpf(sigma) ** 2)  # noqa: E731
    gamma = gamma_root(mean, shape)
    inner = min([mpmath.log(1 / gamma)] + [(1 - 1 / mpmath.mpf(a)) * rdp(a) + mpmath.log(1 / gamma) / a for a in SELECTION_ORDERS])
    values = [rdp(lam) + (1 + shape) * inner + mpmath.log(mean) / (lam - 1) for lam in orders]
    return [min(values[i:]) for i in range(len(values))]


@pytest.mark.parametrize("sigma, mean, shape", [(2.0, 10.0, 1.0), (1.0, 5.0, 0.0), (4.0, 50.0, 2.5)])
def test_repeat_and_select_curve_is_theorem2(sigma, mean, shape):
    """verifier's curve against the mpmath evaluation of Thm 2 (UPPER: never below it, within 1e-9).
    Catches (1 + η) dropped, ln(mean) over λ instead of λ − 1, ln γ with the wrong sign."""
    orders = [1.5, 2.0, 3.0, 8.0, 32.0]
    want = theorem2(sigma, mean, shape, orders)
    for direction in BOTH:
        got = curve_for(RepeatAndSelect(Single(Gaussian(sigma)), mean, shape), orders, direction).values
        for g, w in zip(got, want):
            assert w <= g <= w * (1 + 1e-9), (g, w)


@pytest.mark.parametrize("epsilon", [0.5, 2.0])
def test_repeat_and_select_lower_end_is_the_run(epsilon):
    """The member is the run (a selector that keeps the first run): the lower end is the Gaussian's
    closed form; the upper end is above it (Thm 2 pays for the repetitions)."""
    got = delta_bracket(RepeatAndSelect(Single(Gaussian(1.5)), 10.0, 1.0), epsilon)
    member = gaussian_delta(1 / mpmath.mpf(1.5), epsilon)
    assert abs(got.lower - member) <= MEMBER_RTOL * member
    assert got.upper > got.lower


def test_repeat_and_select_event_claims_are_decided_on_both_sides():
    run = ev("SelfComposedDpEvent", event=ev("PoissonSampledDpEvent", sampling_probability=0.01, event=ev("GaussianDpEvent", noise_multiplier=1.0)), count=300)
    event = ev("SelfComposedDpEvent", event=ev("RepeatAndSelectDpEvent", event=run, mean=10.0, shape=1.0), count=2)
    claim = from_dp_event(event, epsilon=1.0, delta=1e-5)
    assert isinstance(claim.model, Composed) and claim.model.times == 2 and isinstance(claim.model.scheme, RepeatAndSelect)
    assert claim.model.scheme.scheme == Poisson(Gaussian(1.0), 0.01, 300)
    assert parse_claim(claim.to_dict()).model == claim.model
    bracket = collect_bounds(claim.model, Quantity.EPSILON, 1e-5, BOTH).combined
    assert certify(from_dp_event(event, epsilon=bracket.upper * 1.001, delta=1e-5)).verdict is Verdict.CERTIFIED
    assert certify(from_dp_event(event, epsilon=bracket.lower * 0.999, delta=1e-5)).verdict is Verdict.VIOLATED


@pytest.mark.peer
@pytest.mark.parametrize("shape", [0.0, 1.0, 2.5])
def test_repeat_and_select_against_dp_accounting(shape):
    """dp_accounting's RDP accountant computes the same theorem: on its own orders up to 256 (the cap
    by larger orders then runs over the same grid) our curve is never above its own and at most 1e-4
    below: the run's Rényi divergence at fractional orders near 1 (where the λ̂ term is smallest) is
    exact in verifier and a series upper bound in dp_accounting (6.9% larger at λ̂ = 1.1 here). Its ε
    lies in or above verifier's bracket."""
    dp_event = pytest.importorskip("dp_accounting.dp_event")
    from dp_accounting.rdp import rdp_privacy_accountant

    inner = dp_event.SelfComposedDpEvent(dp_event.PoissonSampledDpEvent(0.01, dp_event.GaussianDpEvent(1.0)), 1000)
    accountant = rdp_privacy_accountant.RdpAccountant()
    accountant.compose(dp_event.RepeatAndSelectDpEvent(inner, 10.0, shape))
    orders = [float(a) for a in accountant._orders if 1 < a <= 256]
    theirs = [accountant._rdp[list(accountant._orders).index(a)] for a in orders]
    ours = curve_for(RepeatAndSelect(Poisson(Gaussian(1.0), 0.01, 1000), 10.0, shape), orders, Direction.REMOVE).values
    for o, t in zip(ours, theirs):
        assert t * (1 - 1e-4) <= o <= t * (1 + 1e-9), (o, t)
    eps = accountant.get_epsilon(1e-5)
    claim = from_dp_event(dp_event.RepeatAndSelectDpEvent(inner, 10.0, shape), epsilon=eps, delta=1e-5)
    bracket = collect_bounds(claim.model, Quantity.EPSILON, 1e-5, BOTH).combined
    assert bracket.lower <= eps and bracket.upper <= eps * (1 + 1e-6)


# ---- reliability -------------------------------------------------------------------------------------

GAUSS = ev("GaussianDpEvent", noise_multiplier=1.0)


@pytest.mark.parametrize(
    "event, named",
    [
        (ev("ZCDpEvent", xi=0.0), "rho"),
        (ev("ZCDpEvent", rho=-0.5, xi=0.0), "rho"),
        (ev("ZCDpEvent", rho="0.5", xi=0.0), "rho"),
        (ev("ZCDpEvent", rho=0.5, xi=-1.0), "xi"),
        (ev("ZCDpEvent", rho=0.0, xi=0.5), "rho"),
        (ev("SampledWithoutReplacementDpEvent", source_dataset_size=100, sample_size=10, event=ev("ZCDpEvent", rho=0.5, xi=0.0)), "ZCDpEvent"),
        (ev("PoissonSampledDpEvent", sampling_probability=1.5, event=ev("ZCDpEvent", rho=0.5, xi=0.0)), "rate"),
        (ev("RepeatAndSelectDpEvent", mean=10.0, shape=1.0), "event"),
        (ev("RepeatAndSelectDpEvent", event=GAUSS, shape=1.0), "mean"),
        (ev("RepeatAndSelectDpEvent", event=GAUSS, mean=0.5, shape=1.0), "mean"),
        (ev("RepeatAndSelectDpEvent", event=GAUSS, mean=10.0, shape=-1.0), "shape"),
        (ev("RepeatAndSelectDpEvent", event=GAUSS, mean=10.0, shape=None), "shape"),
        (ev("RepeatAndSelectDpEvent", event=GAUSS, mean=10.0), "shape"),
        (ev("RepeatAndSelectDpEvent", event=ev("NoSuchDpEvent"), mean=10.0, shape=1.0), "NoSuchDpEvent"),
        (json.dumps(ev("RepeatAndSelectDpEvent", event=GAUSS, mean=10.0, shape=math.inf)), "dp_event"),
    ],
)
def test_malformed_events_exit_2_with_one_line(event, named, tmp_path, capsys):
    path = tmp_path / "event.json"
    path.write_text(event if isinstance(event, str) else json.dumps(event))
    code = main(["certify", "--dp-event", str(path), "--epsilon", "1", "--delta", "1e-5"])
    err = capsys.readouterr().err
    assert code == 2 and named in err and len(err.strip().splitlines()) == 1, err


def test_poisson_number_of_runs_is_read():
    """shape = ∞ (Poisson K; Thm 6) from the event object and from its JSON form ("inf": strict JSON
    has no Infinity), and back through the claim's JSON."""
    event = ev("RepeatAndSelectDpEvent", event=GAUSS, mean=10.0, shape=math.inf)
    claim = from_dp_event(event, epsilon=1.0, delta=1e-5)
    assert claim.model == RepeatAndSelect(Single(Gaussian(1.0)), 10.0, math.inf) and claim.model.poisson
    assert from_dp_event({**event, "shape": "inf"}, epsilon=1.0, delta=1e-5).model == claim.model
    assert parse_claim(json.loads(json.dumps(claim.to_dict(), allow_nan=False))).model == claim.model


def _released_law(law: dict, runs: dict, score_values: int, select) -> dict:
    """Exact law (fractions) of what repeat-and-select releases: K runs (K ~ ``runs``) of the
    mechanism whose output is (y, u), y ~ ``law``, u uniform on ``score_values`` values drawn
    independently, and the run ``select`` picks from the list of outputs."""
    import itertools
    from fractions import Fraction

    outcomes = [((y, u), p * Fraction(1, score_values)) for y, p in law.items() for u in range(score_values)]
    out: dict = {}
    for k, pk in runs.items():
        for combo in itertools.product(outcomes, repeat=k):
            weight = pk
            for _, p in combo:
                weight *= p
            chosen = select([o for o, _ in combo])
            out[chosen] = out.get(chosen, 0) + weight
    return out


def _hockey(p: dict, q: dict, ratio) -> object:
    return sum(max(0, p.get(o, 0) - ratio * q.get(o, 0)) for o in set(p) | set(q))


def test_member_argument_by_enumeration():
    """The member argument for repeat-and-select (verifier.certify.methods.member), checked exactly:
    with scores drawn independently of the data and the best score kept (ties: the first run), the
    released y has the run's law under both datasets, so δ(ε) of the release equals the run's at every
    ε. Mutant: a selector that looks at y (keeps a run with y = 0 when there is one, so 1 is released
    only when every run gave 1) leaks more than the run: δ(ln 3) > 0 where the run's is 0."""
    from fractions import Fraction

    p, q = {1: Fraction(3, 4), 0: Fraction(1, 4)}, {1: Fraction(1, 4), 0: Fraction(3, 4)}
    runs = {1: Fraction(1, 2), 2: Fraction(1, 3), 3: Fraction(1, 6)}
    by_score = lambda outs: max(enumerate(outs), key=lambda pair: (pair[1][1], -pair[0]))[1]  # noqa: E731
    released = [_released_law(law, runs, 3, by_score) for law in (p, q)]
    marginal = [{y: sum(w for (yy, _), w in law.items() if yy == y) for y in (0, 1)} for law in released]
    assert marginal == [p, q]
    for ratio in (Fraction(1, 2), Fraction(1), Fraction(2), Fraction(5, 2)):
        assert _hockey(*released, ratio) == _hockey(p, q, ratio)
    by_output = lambda outs: next((o for o in outs if o[0] == 0), outs[0])  # noqa: E731
    peeking = [_released_law(law, runs, 3, by_output) for law in (p, q)]
    assert _hockey(p, q, Fraction(3)) == 0 < _hockey(*peeking, Fraction(3))


def test_poisson_runs_member_by_enumeration():
    """Poisson K (shape = ∞) can be 0, and then nothing (⊥) is released under both datasets: with the
    scores independent of the data, the release is the run mixed with ⊥ at P(K = 0), so its δ(ε) is
    (1 − P(K = 0))·δ_run(ε) exactly (checked on a K law with an atom at 0, exact fractions). verifier's
    lower end for Poisson(μ) runs of the same randomized response (ε₀ = ln 3) is that scaling of the
    closed form δ_run(ε) = (e^ε₀ − e^ε)/(1 + e^ε₀) with P(K = 0) = e^{−μ}. Mutant: the unscaled run (the K >= 1
    member) would sit above the truth by the factor 1/(1 − e^{−μ})."""
    from fractions import Fraction

    from verifier.pairs import RandomizedResponse

    p, q = {1: Fraction(3, 4), 0: Fraction(1, 4)}, {1: Fraction(1, 4), 0: Fraction(3, 4)}
    runs = {0: Fraction(1, 5), 1: Fraction(2, 5), 2: Fraction(1, 5), 3: Fraction(1, 5)}
    by_score = lambda outs: "nothing" if not outs else max(enumerate(outs), key=lambda pair: (pair[1][1], -pair[0]))[1]  # noqa: E731
    released = [_released_law(law, runs, 3, by_score) for law in (p, q)]
    for ratio in (Fraction(1), Fraction(2), Fraction(5, 2)):
        assert _hockey(*released, ratio) == (1 - runs[0]) * _hockey(p, q, ratio)
    for mean, epsilon in ((1.0, 0.5), (3.0, 0.1), (10.0, 1.0)):
        got = delta_bracket(RepeatAndSelect(Single(RandomizedResponse(math.log(3.0))), mean, math.inf), epsilon)
        e0 = mpmath.e ** mpmath.mpf(math.log(3.0))  # the float ε₀ the pair holds (e^ε₀ is not exactly 3)
        want = (1 - mpmath.e ** -mpmath.mpf(mean)) * (e0 - mpmath.e ** mpmath.mpf(epsilon)) / (1 + e0)
        assert want * (1 - 1e-12) <= got.lower <= want, (got.lower, want)
        assert got.upper >= want


def test_a_run_with_only_lower_renyi_curves_has_no_upper_side():
    """Thm 2 needs an UPPER Rényi curve of the run: the shuffle model's curves are LOWER bounds
    (verifier.rdp.LOWER_CURVES), so repeat-and-select of it is refused by the RDP side (mutant: a
    lower curve fed to Thm 2 would be a bogus upper bound), while its member still gives a lower end."""
    from verifier.errors import NotApplicable
    from verifier.schemes import Shuffle

    scheme = RepeatAndSelect(Shuffle(Gaussian(1.0, 2.0), 10), 3.0, 1.0)
    with pytest.raises(NotApplicable, match="no Renyi upper bound"):
        curve_for(scheme, [2.0], Direction.REMOVE)
    bracket = delta_bracket(scheme, 1.0)
    assert bracket.lower > 0 and bracket.upper == math.inf  # no method bounds it above
