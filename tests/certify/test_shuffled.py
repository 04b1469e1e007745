"""Shuffled batches (scheme ``shuffled``) under replace-one neighbours: the LOWER side against random
allocation at sensitivity 2C and against a two-batch integral in mpmath (the attained pair, with
and without a leftover partial batch), the UPPER side against the Gaussian closed form, Monte
Carlo on the attained pair against the bracket, the issue's DP-SGD verdicts, and one-line exit-2
errors."""

import math

import mpmath
import pytest

from verifier import Direction, Gaussian
from verifier._types import Quantity, Side
from verifier.certify.claim import parse_claim
from verifier.certify.methods.allocation_pld import AllocationPLD
from verifier.certify.methods.montecarlo import MonteCarlo
from verifier.certify.methods.shuffled import ShuffledMethod
from verifier.cli import main
from verifier.reference.pairs import gaussian_delta
from verifier.schemes import Allocation, ShuffledBatches

MPMATH_DPS = 30  # working precision of this module's tests (tests/conftest.py)
METHOD = ShuffledMethod()


def bound(scheme, quantity, at, direction, side):
    found = METHOD.delta_bounds(scheme, at, direction) if quantity is Quantity.DELTA else METHOD.epsilon_bounds(scheme, at, direction)
    return next(b.value for b in found if b.side is side)


def two_batch_remove(sigma, shift, lam, eps):
    """H_{e^ε}(λA + (1 − λ)Q² ‖ Q²) for A = ½N((Δ, 0)) + ½N((0, Δ)), Q = N(0, σ²) (one epoch of the
    attained pair with two full batches, the target in one of them w.p. λ), in mpmath: for fixed y₁
    the positive part is a threshold in y₂ (e^{ℓ(y₂)} > c(y₁)), integrated in closed form with
    e^{ℓ(y)}φ_σ(y) = φ_σ(y − Δ), then a 1-D quadrature over y₁."""
    sigma, shift, lam, kappa = (mpmath.mpf(x) for x in (sigma, shift, lam, math.exp(eps)))

    def ratio(y):
        return mpmath.exp((shift * y - shift**2 / 2) / sigma**2)

    def inner(y1):
        free = lam / 2 * ratio(y1) + 1 - lam - kappa  # the integrand without the y2 term
        c = 2 * (kappa - 1 + lam) / lam - ratio(y1)
        if c <= 0:
            return free + lam / 2
        cut = (sigma**2 * mpmath.log(c) + shift**2 / 2) / shift
        return free * mpmath.ncdf(-cut / sigma) + lam / 2 * mpmath.ncdf(-(cut - shift) / sigma)

    # c(y1) = 0 where ratio(y1) = 2(κ − 1 + λ)/λ: the integrand's kink
    kink = (sigma**2 * mpmath.log(2 * (kappa - 1 + lam) / lam) + shift**2 / 2) / shift
    density = lambda y: inner(y) * mpmath.npdf(y, 0, sigma)  # noqa: E731
    return float(mpmath.quad(density, [-12 * sigma, kink, 12 * sigma + shift]))


def test_lower_side_is_random_allocation_at_2c_when_b_divides_n():
    """n = 2560, B = 256 (t = 10), 3 epochs, σ = 1.1, C = 1: both orientations' LOWER ends equal the
    allocation engine's for Allocation(N(σ, 2C), 10, epochs=3) to 1e-9. Catches t = n/B ± 1, the
    sensitivity C instead of 2C, and the orientations swapped (add and remove differ by ~2x here)."""
    scheme = ShuffledBatches(Gaussian(1.1, 2.0), 2560, 256, 3)
    allocation = Allocation(Gaussian(1.1, 2.0), 10, 1, 3)
    engine = AllocationPLD()
    for direction in (Direction.ADD, Direction.REMOVE):
        want = next(b.value for b in engine.epsilon_bounds(allocation, 1e-5, direction) if b.side is Side.LOWER)
        assert bound(scheme, Quantity.EPSILON, 1e-5, direction, Side.LOWER) == pytest.approx(want, rel=1e-9, abs=1e-9)
    assert bound(scheme, Quantity.EPSILON, 1e-5, Direction.ADD, Side.LOWER) < 0.8 * bound(scheme, Quantity.EPSILON, 1e-5, Direction.REMOVE, Side.LOWER)


@pytest.mark.parametrize("n, drop_last", [(20, False), (25, True), (25, False)])
def test_lower_side_against_a_two_batch_integral(n, drop_last):
    """B = 10, one epoch, σ = 1, C = 1: two full batches, the target in them with λ = 20/n. The
    exact δ of the attained pair (mpmath) is at least the LOWER end; and the LOWER end is at least
    the reference at the bound's own argument λ·δ_A(ε + ln(1/λ)) minus the engine's width. The add
    orientation's lower end (PLD subsampling) is within 6% below its exact δ (by duality). Catches
    a missing λ weight or shift (the lower end would exceed the truth), ⌈n/B⌉ batches (three bins
    give a far smaller δ), a kept partial batch counted as a full one, and the orientations
    swapped (remove is ~20% above add at ε = 0.5)."""
    scheme = ShuffledBatches(Gaussian(1.0, 2.0), n, 10, 1, drop_last)
    lam = 20 / n
    for eps in (0.5, 1.5):
        got = bound(scheme, Quantity.DELTA, eps, Direction.REMOVE, Side.LOWER)
        truth = two_batch_remove(1.0, 2.0, lam, eps)
        assert got <= truth * (1 + 1e-9)
        if lam < 1:  # the premise "one epoch is exactly the allocation pair" fails when B ∤ n
            assert truth < 0.9 * two_batch_remove(1.0, 2.0, 1.0, eps)
        at_argument = lam * two_batch_remove(1.0, 2.0, 1.0, eps + math.log(1 / lam))
        assert got >= at_argument - 2e-3 * at_argument
        assert bound(scheme, Quantity.DELTA, eps, Direction.REMOVE, Side.UPPER) >= truth
        # add orientation H(Q²‖M) = 1 − κ + κ·H_{1/κ}(M‖Q²) (duality): the subsampled PLD's lower end
        kappa = math.exp(eps)
        truth_add = 1 - kappa + kappa * two_batch_remove(1.0, 2.0, lam, -eps)
        got_add = bound(scheme, Quantity.DELTA, eps, Direction.ADD, Side.LOWER)
        assert truth_add * 0.94 <= got_add <= truth_add * (1 + 1e-9)


def two_epochs_remove(sigma, shift, lam, eps):
    """H_{e^ε}(M²‖Q²) for M = λN(Δ, σ²) + (1 − λ)Q, Q = N(0, σ²): two epochs of the attained pair with
    one full batch (n = 3, B = 2: λ = 2/3), in mpmath. R(y) = dM/dQ = λe^{(Δy − Δ²/2)/σ²} + 1 − λ
    increases in y, so for fixed y₁ the positive part is y₂ > c(κ/R(y₁)) (all y₂ when κ/R(y₁) <= 1 − λ),
    integrated in closed form; then a 1-D quadrature over y₁ with R(y₁)φ(y₁) = M's density."""
    sigma, shift, lam, kappa = (mpmath.mpf(x) for x in (sigma, shift, lam, math.exp(eps)))

    def ratio(y):
        return lam * mpmath.exp((shift * y - shift**2 / 2) / sigma**2) + 1 - lam

    def cut(r):  # ratio(y) > r  <=>  y > cut(r), for r > 1 - λ
        return (sigma**2 * mpmath.log((r - 1 + lam) / lam) + shift**2 / 2) / shift

    def inner(y1):
        r = kappa / ratio(y1)
        if r <= 1 - lam:
            return ratio(y1) - kappa
        c = cut(r)
        above = lam * mpmath.ncdf(-(c - shift) / sigma) + (1 - lam) * mpmath.ncdf(-c / sigma)
        return ratio(y1) * above - kappa * mpmath.ncdf(-c / sigma)

    points = [-14 * sigma, 14 * sigma + shift]
    if lam < 1:  # the kink where κ/R(y₁) = 1 − λ
        points.insert(1, cut(kappa / (1 - lam)))
    return float(mpmath.quad(lambda y: inner(y) * mpmath.npdf(y, 0, sigma), points))


def test_remove_lower_end_against_two_epochs_in_mpmath():
    """Issue 39: n = 3, B = 2 (one full batch, λ = 2/3), 2 epochs, σ = 2, C = 1, remove orientation.
    The reference is the exact δ of (M², Q²) in mpmath (checked at λ = 1 against the composed
    Gaussian's closed form). The LOWER end of ε(1e-3) (the subsampled PLD's DOMINATED side) is at most
    the exact ε (δ still above 1e-3 there) and within 0.5% of it (the λ^E mixture bound alone, 3.6567,
    is 4% below). Mutants: the same PLD's DOMINATING side used as the lower end is above the exact ε
    (δ already below 1e-3 there); the subsampling in the add orientation is 55% below."""
    from verifier.certify.methods.shuffled import subsampled_epochs

    sigma, delta, lam = 2.0, 1e-3, 2 / 3
    assert two_epochs_remove(sigma, 2.0, 1.0, 1.0) == pytest.approx(float(gaussian_delta(sigma / math.sqrt(2), 1.0, "remove", sensitivity=2.0)), rel=1e-9)
    scheme = ShuffledBatches(Gaussian(sigma, 2.0), 3, 2, 2)
    lower = bound(scheme, Quantity.EPSILON, delta, Direction.REMOVE, Side.LOWER)
    assert two_epochs_remove(sigma, 2.0, lam, lower) > delta  # lower <= the exact ε
    assert two_epochs_remove(sigma, 2.0, lam, lower * 1.005) < delta  # and within 0.5% of it
    for eps in (0.5, 1.5):
        truth = two_epochs_remove(sigma, 2.0, lam, eps)
        assert truth * 0.98 <= bound(scheme, Quantity.DELTA, eps, Direction.REMOVE, Side.LOWER) <= truth
    dominating = subsampled_epochs(scheme, Direction.REMOVE).dominating.epsilon(delta)
    assert two_epochs_remove(sigma, 2.0, lam, dominating) < delta  # the mutant's "lower end" is above the truth
    wrong_orientation = subsampled_epochs(scheme, Direction.ADD).dominated.epsilon(delta)
    assert two_epochs_remove(sigma, 2.0, lam, wrong_orientation * 1.005) > delta  # far from the truth: caught


def two_epochs_add(sigma, shift, lam, eps):
    """H_{e^ε}(Q²‖M²), the add orientation of :func:`two_epochs_remove`'s pair, in mpmath. With
    L = ln R and c = ε + L(y₁): E_Q[(1 − e^{c + L(y₂)})_+] = Q(L < −c) − e^c·M(L < −c) (0 where
    e^{−c} <= 1 − λ), in closed form; then a 1-D quadrature over y₁ ~ Q."""
    sigma, shift, lam = (mpmath.mpf(x) for x in (sigma, shift, lam))

    def ratio(y):
        return lam * mpmath.exp((shift * y - shift**2 / 2) / sigma**2) + 1 - lam

    def inner(y1):
        c = eps + mpmath.log(ratio(y1))
        if mpmath.exp(-c) <= 1 - lam:
            return mpmath.mpf(0)
        cut = (sigma**2 * mpmath.log((mpmath.exp(-c) - 1 + lam) / lam) + shift**2 / 2) / shift  # L(y) < −c <=> y < cut
        below_m = lam * mpmath.ncdf((cut - shift) / sigma) + (1 - lam) * mpmath.ncdf(cut / sigma)
        return mpmath.ncdf(cut / sigma) - mpmath.exp(c) * below_m

    return float(mpmath.quad(lambda y: inner(y) * mpmath.npdf(y, 0, sigma), [-14 * sigma, 0, shift, 14 * sigma + shift]))


def test_add_lower_end_against_two_epochs_in_mpmath():
    """The add orientation (Q², M²) over two epochs, n = 7, B = 4 (λ = 4/7), σ = 4, C = 1, against
    the exact δ in mpmath (checked at λ = 1 against the composed Gaussian). The LOWER end of δ(ε) is
    at most the truth and within 2% of it (1.1% at ε = 0.5 when written). Mutants: the remove
    orientation's end (2x the truth at ε = 0.5) and the DOMINATING side (above the truth)."""
    from verifier.certify.methods.shuffled import subsampled_epochs

    sigma, lam = 4.0, 4 / 7
    assert two_epochs_add(sigma, 2.0, 1.0, 0.5) == pytest.approx(float(gaussian_delta(sigma / math.sqrt(2), 0.5, "add", sensitivity=2.0)), rel=1e-9)
    scheme = ShuffledBatches(Gaussian(sigma, 2.0), 7, 4, 2)
    for eps in (0.1, 0.5):
        truth = two_epochs_add(sigma, 2.0, lam, eps)
        assert truth * 0.98 <= bound(scheme, Quantity.DELTA, eps, Direction.ADD, Side.LOWER) <= truth
        assert bound(scheme, Quantity.DELTA, eps, Direction.REMOVE, Side.LOWER) > truth  # mutant: wrong orientation
        assert subsampled_epochs(scheme, Direction.ADD).dominating.delta(eps) > truth  # mutant: wrong side


def test_one_full_batch_closes_the_bracket():
    """n = B: every epoch is one Gaussian step of shift 2C, so lower and upper both meet the closed
    form (Steinke 2022, Cor 8 via verifier.reference): one epoch, σ = 1 at shift 2."""
    scheme = ShuffledBatches(Gaussian(1.0, 2.0), 50, 50, 1)
    truth = float(gaussian_delta(1.0, 1.0, "remove", sensitivity=2.0))
    lower = bound(scheme, Quantity.DELTA, 1.0, Direction.REMOVE, Side.LOWER)
    upper = bound(scheme, Quantity.DELTA, 1.0, Direction.REMOVE, Side.UPPER)
    assert lower <= truth <= upper
    assert upper == pytest.approx(truth, rel=1e-9)
    assert lower == pytest.approx(truth, rel=1e-2)


def test_upper_side_is_the_unamplified_gaussian():
    """The issue's DP-SGD setting: ε(1e-5) of N(0) vs N(2C) composed over 10 epochs, μ = 2√10/1.1,
    checked against the mpmath closed form at the bound (δ(ε_upper) <= 1e-5 and a hair below it
    exceeds 1e-5)."""
    scheme = ShuffledBatches(Gaussian(1.1, 2.0), 60000, 256, 10)
    upper = bound(scheme, Quantity.EPSILON, 1e-5, Direction.REMOVE, Side.UPPER)
    sigma = 1.1 / math.sqrt(10)
    assert gaussian_delta(sigma, upper, "remove", sensitivity=2.0) <= 1e-5
    assert gaussian_delta(sigma, upper - 1e-6, "remove", sensitivity=2.0) > 1e-5
    assert upper == pytest.approx(40.3044, abs=1e-4)


@pytest.mark.parametrize("n, epochs", [(60, 2), (65, 1)])
def test_monte_carlo_on_the_attained_pair_is_inside_the_bracket(n, epochs):
    """Monte Carlo of the attained pair (B = 10, σ = 1, C = 1; n = 65 leaves a partial batch) is
    labelled as such and its 99% interval meets a bracket of that pair's δ: the allocation engine's
    for B | n (both orientations); for one epoch with λ < 1 the exact δ = λ·δ_A(ε'),
    ε' = ln(1 + (e^ε − 1)/λ) (Balle, Barthe & Gaboardi 2018, Thm 2), bracketed by the engine's at ε'.
    Catches a sampler that draws the wrong λ, t or orientation."""
    scheme = ShuffledBatches(Gaussian(1.0, 2.0), n, 10, epochs)
    mc = MonteCarlo()
    engine = AllocationPLD()
    allocation = Allocation(Gaussian(1.0, 2.0), n // 10, 1, epochs)
    lam = (n // 10) * 10 / n
    eps = 1.0
    directions = (Direction.REMOVE, Direction.ADD) if lam == 1 else (Direction.REMOVE,)
    for direction in directions:
        (estimate,) = mc.delta_estimates(scheme, eps, direction)
        assert "attained pair" in estimate.note
        if lam == 1:
            found = engine.delta_bounds(allocation, eps, direction)
            lo = next(b.value for b in found if b.side is Side.LOWER)
            hi = next(b.value for b in found if b.side is Side.UPPER)
        else:  # one epoch: exact δ = λ·δ_A(ε'), ε' = ln(1 + (e^ε − 1)/λ)
            inner = math.log1p(math.expm1(eps) / lam)
            found = engine.delta_bounds(allocation, inner, direction)
            lo = lam * next(b.value for b in found if b.side is Side.LOWER)
            hi = lam * next(b.value for b in found if b.side is Side.UPPER)
        assert estimate.lower <= hi and estimate.upper >= lo, (direction, estimate, lo, hi)


def test_dp_sgd_verdicts_name_the_attained_datasets(capsys):
    """Issue 24's "Done when" 1: σ = 1.1, n = 60000, B = 256, 10 epochs, replace-one: the Poisson
    replace-one ε = 1.5416 is VIOLATED (exit 1) and the certificate names the attained datasets;
    ε = 41 (above the unamplified 40.3044) is CERTIFIED (exit 0). (Monte Carlo evidence is left out
    here; its own test holds it against the bracket.)"""
    argv = ["certify", "--sigma", "1.1", "--scheme", "shuffled", "--dataset-size", "60000", "--batch-size", "256",
            "--epochs", "10", "--neighboring", "replace_one", "--method", "shuffled", "--delta", "1e-5", "--epsilon"]
    assert main(argv + ["1.5416"]) == 1
    out = capsys.readouterr().out
    assert "VIOLATED" in out and "attained datasets D = (v, ..., v)" in out and "remove: δ(ε) >=" in out
    assert main(argv + ["41"]) == 0
    assert "CERTIFIED" in capsys.readouterr().out


@pytest.mark.parametrize(
    "scheme, neighboring, mechanism, field",
    [
        ({"dataset_size": 100, "batch_size": 101}, "replace_one", "gaussian", "scheme.batch_size"),
        ({"dataset_size": 100, "batch_size": 10, "epochs": 0}, "replace_one", "gaussian", "scheme.epochs"),
        ({"dataset_size": 100, "batch_size": 10}, "add_or_remove", "gaussian", "neighboring"),
        ({"dataset_size": 100, "batch_size": 10}, "remove", "gaussian", "neighboring"),
        ({"dataset_size": 100, "batch_size": 10, "drop_last": 1}, "replace_one", "gaussian", "scheme.drop_last"),
        ({"dataset_size": 100, "batch_size": 10}, "replace_one", "rr", "mechanism.name"),
    ],
)
def test_bad_claims_name_the_field(scheme, neighboring, mechanism, field):
    from verifier.errors import InvalidArgument

    mech = {"name": "gaussian", "sigma": 1.0} if mechanism == "gaussian" else {"name": "rr", "epsilon0": 1.0}
    claim = {"mechanism": mech, "scheme": {"name": "shuffled", **scheme}, "neighboring": neighboring, "epsilon": 1.0, "delta": 1e-5}
    with pytest.raises(InvalidArgument) as info:
        parse_claim(claim)
    assert info.value.name == field


@pytest.mark.parametrize(
    "extra, field",
    [
        (["--dataset-size", "100", "--batch-size", "101", "--neighboring", "replace_one"], "batch_size"),
        (["--dataset-size", "100", "--batch-size", "10", "--epochs", "0", "--neighboring", "replace_one"], "epochs"),
        (["--dataset-size", "100", "--batch-size", "10"], "neighboring"),
        (["--dataset-size", "100", "--batch-size", "10", "--neighboring", "add_or_remove"], "neighboring"),
    ],
)
@pytest.mark.parametrize("command", ["certify", "epsilon"])
def test_cli_bad_input_exits_2_with_one_line(command, extra, field, capsys):
    argv = [command, "--sigma", "1", "--scheme", "shuffled", *extra, "--delta", "1e-5"]
    if command == "certify":
        argv += ["--epsilon", "1"]
    else:
        argv = [a if a != "--neighboring" else "--direction" for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and field in err, err


def test_certificate_validates_and_names_the_attained_datasets():
    """The certificate of a shuffled claim (drop_last given) validates against the packaged schema,
    keeps drop_last as a boolean, and its modelling names the attained datasets."""
    import json

    jsonschema = pytest.importorskip("jsonschema")
    from verifier.certify.certificate import schema, to_certificate
    from verifier.certify.verdict import certify

    claim = parse_claim({
        "mechanism": {"name": "gaussian", "sigma": 1.1}, "neighboring": "replace_one", "epsilon": 1.0, "delta": 1e-5,
        "scheme": {"name": "shuffled", "dataset_size": 2600, "batch_size": 256, "epochs": 2, "drop_last": True},
    })
    cert = to_certificate(certify(claim))
    jsonschema.Draft202012Validator(schema()).validate(json.loads(json.dumps(cert)))
    assert cert["verdict"] == "VIOLATED" and cert["claim"]["scheme"]["drop_last"] is True
    assert "attained datasets D = (v, ..., v)" in json.dumps(cert)


def test_opacus_add_remove_number_is_refuted_through_group_privacy():
    """README: an add/remove (ε, δ) guarantee gives replace-one (2ε, (1 + e^ε)δ) (a replacement is a
    removal then an addition). Opacus's PRV ε = 0.9276 at δ = 1e-5 for the shuffled DP-SGD loader
    (σ = 1.1, n = 60000, B = 256, 10 epochs) would give replace-one ε = 1.8551 at 3.53e-5, and the
    shuffled lower end there is above it: the add/remove number is false in its own relation."""
    eps = 0.9275652708525054  # PRVAccountant, history [(1.1, 1/235, 2350)]
    scheme = ShuffledBatches(Gaussian(1.1, 2.0), 60000, 256, 10)
    lower = bound(scheme, Quantity.EPSILON, (1 + math.exp(eps)) * 1e-5, Direction.REMOVE, Side.LOWER)
    assert lower > 5.6 > 2 * eps


def test_summary_prints_counts_and_flags_exactly():
    """The certify summary's scheme line: n = 10000050 was printed as 1e+07 (the %g of a float) and
    drop_last as 0."""
    from verifier.cli._certify import describe_part

    text = describe_part({"name": "shuffled", "dataset_size": 10000050, "batch_size": 100, "epochs": 3, "drop_last": True})
    assert text == "shuffled(dataset_size=10000050, batch_size=100, epochs=3, drop_last=true)"


@pytest.mark.slow  # 12 Hypothesis examples, ~1 s CPU each
def test_random_small_runs_keep_lower_below_upper_and_below_the_allocation():
    """Random small runs (B 2–8, n from B to 6B, 1–2 epochs, σ 0.7–3, both drop_last): in both
    orientations the LOWER end of δ(ε) is in [0, UPPER end], and at most the allocation engine's
    UPPER end for 1-out-of-⌊n/B⌋ allocation (mixing in "not in a full batch" is post-processing of
    that pair, in either orientation, so its δ can only be lower). Catches a shift or weight applied the wrong way round (the mixture
    bound would exceed the allocation's) and a negative or NaN lower end."""
    from hypothesis import given, settings, strategies as st

    @settings(max_examples=12, deadline=None, derandomize=True)
    @given(st.integers(2, 8), st.integers(1, 6), st.integers(0, 7), st.integers(1, 2), st.floats(0.7, 3.0), st.booleans(), st.sampled_from([0.3, 2.0]))
    def check(batch, full, extra, epochs, sigma, drop_last, eps):
        n = full * batch + extra % batch
        scheme = ShuffledBatches(Gaussian(sigma, 2.0), n, batch, epochs, drop_last)
        allocation = Allocation(Gaussian(sigma, 2.0), full, 1, epochs)
        for direction in (Direction.ADD, Direction.REMOVE):
            lower = bound(scheme, Quantity.DELTA, eps, direction, Side.LOWER)
            assert 0.0 <= lower <= bound(scheme, Quantity.DELTA, eps, direction, Side.UPPER)
            found = AllocationPLD().delta_bounds(allocation, eps, direction)
            assert lower <= next(b.value for b in found if b.side is Side.UPPER) * (1 + 1e-12)

    check()
