"""MMCC for a general non-negative C under Poisson sampling (scheme ``matrix_poisson``, method
``mmcc``): C = I against Poisson DP-SGD, a b-banded C with b groups against ``banded_poisson``,
the posterior tail bound against its closed form (ADD) and Monte Carlo (REMOVE), the bracket
against Monte Carlo on the full N-dimensional pair (exact mixture density over the 2^N
participation patterns), and one-line exit-2 errors for strategies MMCC does not cover."""

import math

import numpy as np
import pytest
from scipy import stats

from verifier import Direction, Gaussian
from verifier._types import Quantity, Side
from verifier.certify.claim import parse_claim
from verifier.certify.methods.banded_poisson import BandedPoissonMethod
from verifier.certify.methods.mmcc import MMCC
from verifier.certify.methods.pld import PLDMethod
from verifier.cli import main
from verifier.errors import InvalidArgument
from verifier.matrix import bsr, from_array, identity
from verifier.matrix.mmcc import posterior_threshold, scaled
from verifier.montecarlo.intervals import kl_lower, kl_upper
from verifier.schemes import BandedPoisson, MatrixPoisson, Poisson

METHOD = MMCC()

#: The exact reduction only nudges each sensitivity by one ulp toward the safe side.
EXACT_RTOL = 1e-9
#: Error probability of each Monte Carlo interval.
MC_ERR = 1e-3


def bracket(method, scheme, quantity, at, direction):
    found = method.quantity_bounds(scheme, quantity, at, direction)
    return (next(b.value for b in found if b.side is Side.LOWER), next(b.value for b in found if b.side is Side.UPPER))


@pytest.mark.parametrize("direction", [Direction.REMOVE, Direction.ADD])
def test_identity_is_poisson_dp_sgd(direction):
    """C = I, one group: Poisson DP-SGD; both ends equal the PLD method's on Poisson(σ, q, N) to 1e-9
    (a posterior term where none exists, or a wrong rate, moves them by far more)."""
    sigma, rate, steps = 1.1, 0.01, 100
    got = bracket(METHOD, MatrixPoisson(Gaussian(sigma), identity(steps), rate), Quantity.EPSILON, 1e-5, direction)
    found = PLDMethod().epsilon_bounds(Poisson(Gaussian(sigma), rate, steps), 1e-5, direction)
    want = (next(b.value for b in found if b.side is Side.LOWER), next(b.value for b in found if b.side is Side.UPPER))
    assert got == pytest.approx(want, rel=EXACT_RTOL)


def test_banded_strategy_with_as_many_groups_matches_banded_poisson(direction=Direction.REMOVE):
    """A 3-banded BSR with 3 groups is cyclic Poisson sampling of a b-banded C, where both schemes
    apply: the record's columns (3 apart) have disjoint supports, MMCC's pair is the Poisson run of
    their norms, and its bracket overlaps (here equals) banded_poisson's."""
    strategy = bsr(6, 3)
    got = bracket(METHOD, MatrixPoisson(Gaussian(2.0), strategy, 0.2, 3), Quantity.DELTA, 0.5, direction)
    want = bracket(BandedPoissonMethod(), BandedPoisson(Gaussian(2.0), strategy, 3, 0.2), Quantity.DELTA, 0.5, direction)
    assert got[0] <= want[1] and want[0] <= got[1]
    assert got == pytest.approx(want, rel=EXACT_RTOL)


def test_add_threshold_is_the_gaussian_quantile():
    """ADD: L_j = ⟨y, v⟩ − ‖v‖²/2 with y ~ N(0, I) is N(−‖v‖²/2, ‖v‖²), so P(L_j > τ) equals β up to the
    margin (a threshold at the mean, or with ‖v‖² for ‖v‖, is far off)."""
    v2, beta = 1.7, 1e-6
    tau = posterior_threshold(Direction.ADD, v2, np.array([v2]), 0.1, beta)
    tail = stats.norm.sf((tau + v2 / 2) / math.sqrt(v2))
    assert tail <= beta and tail == pytest.approx(beta, rel=1e-6)


def test_remove_threshold_against_monte_carlo():
    """REMOVE: for C = BSR(3 bands), N = 3, step i = 2 and j = 0, L_0 = ⟨y_{<2}, A_{<2} e_0⟩ − ‖·‖²/2 under
    y ~ P; Monte Carlo of the attained release puts P(L_0 > τ) at or below β = 0.02 (99.9% interval),
    and not below β/4 (a threshold that ignored the other participations, the ADD value, is exceeded
    far more often than β; one that assumed all of them is far above)."""
    sigma, rate, beta = 0.8, 0.4, 0.02
    a = scaled(bsr(3, 3).dense(), 1.0, sigma)
    v = a[:2, 0]
    weights = a[:2, :].T @ v
    tau = posterior_threshold(Direction.REMOVE, float(v @ v), weights, rate, beta)
    rng = np.random.default_rng(5)
    samples = 400_000
    b = rng.random((samples, 3)) < rate
    y = b @ a.T + rng.standard_normal((samples, 3))
    frac = float(np.mean(y[:, :2] @ v - v @ v / 2 > tau))
    assert float(kl_lower(frac, samples, MC_ERR)) <= beta
    assert frac >= beta / 4
    tau_add = posterior_threshold(Direction.ADD, float(v @ v), weights, rate, beta)
    assert float(kl_lower(float(np.mean(y[:, :2] @ v - v @ v / 2 > tau_add)), samples, MC_ERR)) > beta


def _mc_pair_delta(c: np.ndarray, sigma: float, rate: float, epsilon: float, direction: Direction, samples: int, seed: int):
    """δ(ε) of the full N-dimensional pair (law of C·B/σ + Z, B_j ~ Bernoulli(q), against N(0, I)) by
    Monte Carlo with the exact mixture density over the 2^N patterns: a KL-Chernoff interval."""
    n = c.shape[0]
    patterns = np.array(np.meshgrid(*[[0, 1]] * n, indexing="ij")).reshape(n, -1).T
    weights = np.prod(np.where(patterns == 1, rate, 1 - rate), axis=1)
    means = patterns @ c.T / sigma
    rng = np.random.default_rng(seed)
    y = rng.standard_normal((samples, n))
    if direction is Direction.REMOVE:
        y += means[rng.choice(len(weights), size=samples, p=weights)]
    loss = np.logaddexp.reduce(y @ means.T - 0.5 * np.sum(means**2, axis=1) + np.log(weights), axis=1)
    loss = loss if direction is Direction.REMOVE else -loss
    mean = float(np.mean(-np.expm1(np.minimum(epsilon - loss, 0.0))))
    return float(kl_lower(mean, samples, MC_ERR)), float(kl_upper(mean, samples, MC_ERR))


@pytest.mark.slow
@pytest.mark.parametrize("direction", [Direction.REMOVE, Direction.ADD])
def test_bracket_holds_monte_carlo_of_the_full_pair(direction):
    """A dense 4×4 non-negative C (every column overlaps every later one; banded_poisson does not
    apply): the MMCC bracket on δ(0.5) holds the Monte Carlo interval of the attained pair, and the
    block projection's lower end is within 5% of it. Measured: REMOVE [0.2900, 0.7256] around
    [0.2932, 0.2986]; ADD [0.1768, 0.7096] around [0.1809, 0.1855]."""
    c = np.array([[1.0, 0, 0, 0], [0.7, 1, 0, 0], [0.5, 0.7, 1, 0], [0.3, 0.5, 0.7, 1]])
    lo, hi = bracket(METHOD, MatrixPoisson(Gaussian(1.0), from_array(c), 0.3), Quantity.DELTA, 0.5, direction)
    mc_lo, mc_hi = _mc_pair_delta(c, 1.0, 0.3, 0.5, direction, 400_000, seed=1)
    assert lo <= mc_hi and mc_lo <= hi, (lo, hi, mc_lo, mc_hi)
    assert lo >= 0.95 * mc_lo


def test_wider_than_groups_brackets_monte_carlo():
    """BSR(3 bands), N = 3, one group, σ = 2: the posterior of the earlier participations enters
    every later step; the bracket on δ(0.2) holds the Monte Carlo interval of the full pair."""
    c = bsr(3, 3).dense()
    lo, hi = bracket(METHOD, MatrixPoisson(Gaussian(2.0), bsr(3, 3), 0.3), Quantity.DELTA, 0.2, Direction.REMOVE)
    mc_lo, mc_hi = _mc_pair_delta(c, 2.0, 0.3, 0.2, Direction.REMOVE, 200_000, seed=2)
    assert lo <= mc_hi and mc_lo <= hi, (lo, hi, mc_lo, mc_hi)
    assert lo < hi


def test_claim_and_cli_refuse_strategies_mmcc_does_not_cover(capsys, tmp_path):
    claim = {"mechanism": {"name": "gaussian", "sigma": 2.0}, "scheme": {"name": "matrix_poisson", "rate": 0.1, "steps": 20,
             "matrix": "bsr", "bands": 4}, "neighboring": "add_or_remove", "epsilon": 1.2, "delta": 1e-5}
    assert isinstance(parse_claim(claim).model, MatrixPoisson) and parse_claim(claim).model.groups == 1
    signed = tmp_path / "signed.csv"
    np.savetxt(signed, np.array([[1.0, 0.0], [-0.5, 1.0]]), delimiter=",")
    upper = tmp_path / "upper.csv"
    np.savetxt(upper, np.array([[1.0, 0.3], [0.5, 1.0]]), delimiter=",")
    for bad, field in (({"groups": 21}, "groups"), ({"rate": 0.0}, "rate"), ({"matrix": None, "bands": None, "matrix_file": str(signed), "steps": 3}, "matrix_file")):
        with pytest.raises(InvalidArgument) as info:
            parse_claim({**claim, "scheme": {**claim["scheme"], **bad}})
        assert field in info.value.name
    argv = ["epsilon", "--sigma", "2", "--scheme", "matrix_poisson", "--rate", "0.1", "--delta", "1e-5"]
    for extra, words in (
        (["--matrix-file", str(signed), "--steps", "2"], ("non-negative",)),
        (["--matrix-file", str(upper), "--steps", "2"], ("lower-triangular",)),
        (["--matrix-file", str(signed), "--steps", "3"], ("N = 2", "N = 3")),
        (["--matrix", "bsr", "--bands", "2", "--steps", "4", "--groups", "5"], ("groups=5",)),
    ):
        assert main(argv + extra) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and all(w in err for w in words), err


def test_certificate_validates_against_the_schema():
    jsonschema = pytest.importorskip("jsonschema")
    import json

    from verifier.certify.certificate import schema, to_certificate
    from verifier.certify.verdict import certify

    claim = parse_claim({"mechanism": {"name": "gaussian", "sigma": 1.1}, "scheme": {"name": "matrix_poisson", "rate": 0.01,
                         "steps": 100, "matrix": "identity"}, "neighboring": "add_or_remove", "epsilon": 2.0, "delta": 1e-5})
    result = certify(claim, only=["mmcc"])
    assert result.verdict.value == "CERTIFIED"
    jsonschema.validate(json.loads(json.dumps(to_certificate(result))), schema())
