"""Banded matrix factorisation with cyclic Poisson sampling (scheme ``banded_poisson``): the b = 1
identity case against Poisson DP-SGD, the reduction against Monte Carlo on the full N-dimensional
pair (exact mixture density, no projection), the group profile against hand-computed column norms,
and one-line exit-2 errors for strategies the reduction does not cover."""

import math

import numpy as np
import pytest
from scipy import stats

from verifier import Direction, Gaussian
from verifier._types import Quantity, Side
from verifier.certify.claim import parse_claim
from verifier.certify.methods.banded_poisson import BandedPoissonMethod, group_norms, reduction
from verifier.certify.methods.pld import PLDMethod
from verifier.cli import main
from verifier.errors import InvalidArgument
from verifier.matrix import bsr, from_array, identity, toeplitz
from verifier.schemes import BandedPoisson, Poisson, Sequence

METHOD = BandedPoissonMethod()

#: The b = 1 reduction only nudges each sensitivity by one ulp toward the safe side.
B1_RTOL = 1e-9


def bracket(scheme, quantity, at, direction):
    found = METHOD.delta_bounds(scheme, at, direction) if quantity is Quantity.DELTA else METHOD.epsilon_bounds(scheme, at, direction)
    return (next(b.value for b in found if b.side is Side.LOWER), next(b.value for b in found if b.side is Side.UPPER))


@pytest.mark.parametrize("direction", [Direction.REMOVE, Direction.ADD])
def test_one_group_identity_is_poisson_dp_sgd(direction):
    """C = I, b = 1: DP-SGD with Poisson sampling; both ends equal the PLD method's on Poisson(σ, q, N)
    to 1e-9 (a reduction that dropped a step, or used the wrong rate, moves them by far more)."""
    sigma, rate, steps = 1.1, 0.01, 100
    got = bracket(BandedPoisson(Gaussian(sigma), identity(steps), 1, rate), Quantity.EPSILON, 1e-5, direction)
    found = PLDMethod().epsilon_bounds(Poisson(Gaussian(sigma), rate, steps), 1e-5, direction)
    want = (next(b.value for b in found if b.side is Side.LOWER), next(b.value for b in found if b.side is Side.UPPER))
    assert got == pytest.approx(want, rel=B1_RTOL)


def test_group_norms_are_the_column_norms_of_each_group():
    """Group r holds steps r, r + b, …; a column's norm is over the rows that exist (the last columns
    of a banded C are cut by the bottom edge). Hand-computed for a 3-banded Toeplitz C, N = 7, b = 3."""
    c = [1.0, -0.5, 0.25]
    full, two, one = math.sqrt(1 + 0.25 + 0.0625), math.sqrt(1 + 0.25), 1.0
    scheme = BandedPoisson(Gaussian(1.0), toeplitz(7, c), 3, 0.1)
    got = group_norms(scheme, Side.UPPER)
    want = [[full, full, one], [full, full], [full, two]]
    for g, w in zip(got, want):
        assert g == pytest.approx(w, rel=1e-15)
        assert all(x >= y for x, y in zip(g, w))  # rounded up, never down


def test_upper_profile_dominates_every_group_and_lower_is_a_group():
    """UPPER composes, for each k, the largest k-th norm over the groups; LOWER one real group. Here
    (diagonal C, N = 5, b = 2) group 0 has norms (2, 1, 1) and group 1 (1.5, 1.5) and no group
    dominates the other: UPPER takes (2, 1.5, 1), LOWER the lexicographically largest group, 0."""
    c = np.diag([1.0, 1.5, 2.0, 1.5, 1.0])
    scheme = BandedPoisson(Gaussian(1.0, 2.0), from_array(c), 2, 0.1)
    upper = reduction(scheme, Side.UPPER)
    lower = reduction(scheme, Side.LOWER)
    assert isinstance(upper, Sequence) and [p.pair.sensitivity for p in upper.phases] == pytest.approx([4.0, 3.0, 2.0], rel=1e-15)
    assert [p.steps for p in upper.phases] == [1, 1, 1] and upper.phases[1].pair.sensitivity >= 3.0
    assert isinstance(lower, Sequence) and [p.steps for p in lower.phases] == [1, 2]
    assert [p.pair.sensitivity for p in lower.phases] == pytest.approx([4.0, 2.0], rel=1e-15)
    assert lower.phases[0].pair.sensitivity <= 4.0 and lower.phases[1].pair.sensitivity <= 2.0


def _mc_delta(strategy: np.ndarray, group: int, groups: int, sigma: float, rate: float, epsilon: float, samples: int, seed: int):
    """δ(ε) of the REMOVE pair of one record of ``group`` on the full N-dimensional release C·X + Z,
    by Monte Carlo with the exact mixture density over the 2^k participation patterns (no
    projection, no reduction): mean and 99.9% normal interval."""
    n = strategy.shape[0]
    steps = list(range(group, n, groups))
    patterns = np.array(np.meshgrid(*[[0, 1]] * len(steps), indexing="ij")).reshape(len(steps), -1).T
    weights = np.prod(np.where(patterns == 1, rate, 1 - rate), axis=1)
    means = patterns @ strategy[:, steps].T  # each pattern's mean of C·X (gradient 1 in coordinate 1)
    rng = np.random.default_rng(seed)
    which = rng.choice(len(weights), size=samples, p=weights)
    y = means[which] + sigma * rng.standard_normal((samples, n))
    # log P(y)/Q(y) = log Σ_s w_s exp((<y, m_s> - |m_s|²/2)/σ²)
    exponents = (y @ means.T - 0.5 * np.sum(means**2, axis=1)) / sigma**2 + np.log(weights)
    loss = np.logaddexp.reduce(exponents, axis=1)
    values = -np.expm1(np.minimum(epsilon - loss, 0.0))
    mean, err = values.mean(), values.std(ddof=1) / math.sqrt(samples)
    z = stats.norm.ppf(0.9995)
    return mean - z * err, mean + z * err


def test_reduction_agrees_with_monte_carlo_on_the_full_release():
    """N = 6, b = 2, a signed 2-banded C: the bracket on δ(ε) for each group (the worst one is the
    scheme's) holds the Monte Carlo interval of the attained pair on the 6-dimensional release
    (computed from the mixture density itself). A reduction with the wrong column norms (e.g. the
    row norms, or |c_0| alone) misses it by many standard errors."""
    c = np.array([[1.0, 0, 0, 0, 0, 0], [0.8, 1.0, 0, 0, 0, 0], [0, -0.6, 1.0, 0, 0, 0],
                  [0, 0, 0.5, 1.0, 0, 0], [0, 0, 0, 0.9, 1.0, 0], [0, 0, 0, 0, -0.3, 1.0]])
    sigma, rate, epsilon = 1.0, 0.5, 0.5
    scheme = BandedPoisson(Gaussian(sigma), from_array(c), 2, rate)
    lo, hi = bracket(scheme, Quantity.DELTA, epsilon, Direction.REMOVE)
    worst_lo, worst_hi = 0.0, 0.0
    for group in (0, 1):
        mc_lo, mc_hi = _mc_delta(c, group, 2, sigma, rate, epsilon, 100_000, seed=group)
        worst_lo, worst_hi = max(worst_lo, mc_lo), max(worst_hi, mc_hi)
    assert worst_lo <= hi and lo <= worst_hi, (lo, hi, worst_lo, worst_hi)


def test_bsr_bracket_is_tight_when_group_zero_dominates():
    """BSR with b = p and b | N: group 0's columns all have full norm, so both sides compose the same
    steps and the bracket is the PLD engine's width (< 0.1%)."""
    lo, hi = bracket(BandedPoisson(Gaussian(2.0), bsr(40, 4), 4, 0.1), Quantity.EPSILON, 1e-5, Direction.REMOVE)
    assert 0 < lo <= hi <= lo * 1.001


def test_claim_and_cli_agree_and_refuse_bad_strategies(capsys):
    claim = {"mechanism": {"name": "gaussian", "sigma": 2.0}, "scheme": {"name": "banded_poisson", "groups": 4, "rate": 0.1,
             "steps": 40, "matrix": "bsr", "bands": 4}, "neighboring": "add_or_remove", "epsilon": 1.2, "delta": 1e-5}
    assert isinstance(parse_claim(claim).model, BandedPoisson)
    for bad, field in (({"groups": 3}, "groups"), ({"steps": 3}, "groups"), ({"rate": 0.0}, "rate")):
        with pytest.raises(InvalidArgument) as info:
            parse_claim({**claim, "scheme": {**claim["scheme"], **bad}})
        assert field in info.value.name
    with pytest.raises(InvalidArgument) as info:
        parse_claim({**claim, "neighboring": "replace_one"})
    assert info.value.name == "neighboring"
    argv = ["epsilon", "--sigma", "2", "--scheme", "banded_poisson", "--matrix", "bsr", "--bands", "4", "--steps", "40",
            "--rate", "0.1", "--delta", "1e-5", "--groups"]
    assert main(argv + ["3"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "groups=3" in err and "bandwidth 4" in err


def test_certificate_validates_against_the_schema():
    jsonschema = pytest.importorskip("jsonschema")
    import json

    from verifier.certify.certificate import schema, to_certificate
    from verifier.certify.verdict import certify

    claim = parse_claim({"mechanism": {"name": "gaussian", "sigma": 2.0}, "scheme": {"name": "banded_poisson", "groups": 4,
                         "rate": 0.1, "steps": 40, "matrix": "bsr", "bands": 4}, "neighboring": "add_or_remove",
                         "epsilon": 1.2, "delta": 1e-5})
    result = certify(claim, only=["banded-poisson"])
    assert result.verdict.value == "CERTIFIED"
    jsonschema.validate(json.loads(json.dumps(to_certificate(result))), schema())


def _unit_bsr(size: int, bands: int):
    """BSR's coefficients scaled to maximum column norm 1, as jax_privacy's ``amplified_bandmf_event``
    assumes of the strategy ("noise multiplier ... assuming max L2 column norm of one")."""
    coefficients = [math.comb(2 * t, t) / 4**t for t in range(bands)]
    norm = math.sqrt(sum(c * c for c in coefficients))
    return toeplitz(size, [c / norm for c in coefficients])


@pytest.mark.peer
def test_dp_accounting_number_for_the_amplified_bandmf_event_lies_in_the_bracket():
    """jax_privacy 2.0 accounts amplified BandMF (σ, T steps, b bands, rate q) as the event
    SelfComposed(PoissonSampled(q, Gaussian(σ)), ⌈T/b⌉) (its builder, checked by the test below when
    jax_privacy is installed); dp_accounting's PLD number for that event (1e-4 grid) lies inside
    verifier's bracket for the unit-column-norm BSR strategy (0.79847 in [0.79797, 0.79855])."""
    dp_accounting = pytest.importorskip("dp_accounting")
    sigma, steps, bands, rate = 2.0, 40, 4, 0.1
    event = dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(rate, dp_accounting.GaussianDpEvent(sigma)), math.ceil(steps / bands)
    )
    accountant = dp_accounting.pld.PLDAccountant(dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE, value_discretization_interval=1e-4)
    peer = accountant.compose(event).get_epsilon(1e-5)
    scheme = BandedPoisson(Gaussian(sigma), _unit_bsr(steps, bands), bands, rate)
    lo, hi = bracket(scheme, Quantity.EPSILON, 1e-5, Direction.REMOVE)
    assert lo <= peer <= hi, (lo, peer, hi)


@pytest.mark.peer
@pytest.mark.slow
def test_jax_privacy_builds_the_event_the_bracket_is_compared_with():
    """jax_privacy's ``amplified_bandmf_event`` is the Poisson event over ⌈T/b⌉ rounds (importing jax
    takes ~20 s: slow)."""
    accounting = pytest.importorskip("jax_privacy.experimental.accounting")
    import dp_accounting

    event = accounting.amplified_bandmf_event(2.0, 40, num_bands=4, sampling_prob=0.1)
    assert event == dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(0.1, dp_accounting.GaussianDpEvent(2.0)), 10
    )
