"""The shuffled-clones UPPER method (verifier.shuffle.batches) against brute force on tiny datasets:
one epoch of n = 6 records in batches of 3 (and n = 7 with drop_last), Laplace noise of scale 4 on
records in [-1, 1] (eps0 = 1/2), every labelled partition, adaptive gradient maps, the hockey stick
by grid quadrature (tests/shuffle/shuffled_enumeration.py). The rigorous upper end lies above every
dataset's truth and below the unamplified Laplace pair; the LOWER end of the shuffled method meets the
attained dataset's truth within 1%; certify's verdicts at -1% of that truth and +1% of the upper end;
the method declines, with its numbers, where the clone bound does not amplify (Gaussian, t = 2)."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "shuffle"))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root: proofs/ (the coupling export)
from shuffled_enumeration import axes, batch_density, hockey  # noqa: E402

from verifier._types import Direction, Quantity, Side
from verifier.certify.claim import parse_claim
from verifier.certify.methods.shuffled import ShuffledClones, ShuffledMethod
from verifier.certify.verdict import certify
from verifier.errors import NotApplicable
from verifier.pairs import Gaussian, Laplace
from verifier.schemes import ShuffledBatches

SCALE, SPAN, STEP = 4.0, 70.0, 0.25
EPSILONS = (0.0, 0.1, 0.3)
DATASETS = [
    (1.0, -1.0, (1.0, 1.0, 1.0, 1.0, 1.0)),  # the attained pair of the LOWER side
    (1.0, -1.0, (-1.0, 0.5, 0.0, 1.0, -0.3)),
    (0.2, -1.0, (0.9, 0.9, -0.8, 0.0, 0.4)),
]


def identity(j, hist, x):
    return x


def damped(j, hist, x):
    return x if j == 0 else x * np.tanh(2.0 * hist[-1])


def truths(target, other, others, g, drop_last=False, batch=3):
    """(H(D‖D'), H(D'‖D)) at each of EPSILONS by quadrature (two released batches)."""
    grid = axes(2, SPAN, STEP)
    p = batch_density((target, *others), batch, g, "laplace", SCALE, grid, drop_last)
    q = batch_density((other, *others), batch, g, "laplace", SCALE, grid, drop_last)
    cell = STEP**2
    return {eps: (hockey(p, q, eps, cell), hockey(q, p, eps, cell)) for eps in EPSILONS}


def upper(scheme, eps):
    found = ShuffledClones().delta_bounds(scheme, eps, Direction.REMOVE)
    (b,) = [b for b in found if b.side is Side.UPPER]
    return b.value


@pytest.fixture(scope="module")
def attained():
    return truths(*DATASETS[0], identity)


@pytest.mark.parametrize("drop_last, n", [(False, 6), (True, 7)], ids=["n6", "n7-drop-last"])
def test_upper_end_above_every_brute_force_truth(drop_last, n):
    """Every dataset and gradient map's hockey stick (both orders) <= the method's UPPER end, which
    is below the unamplified Laplace pair's. (At n = 6 the all-equal dataset is the largest of the
    datasets and maps tried: 0.1422 at eps = 0 against the upper end 0.1706.)"""
    scheme = ShuffledBatches(Laplace(SCALE, 2.0), n, 3, 1, drop_last)
    pair = Laplace(SCALE, 2.0)
    bounds = {eps: upper(scheme, eps) for eps in EPSILONS}
    for target, other, others in DATASETS:
        data = others + ((0.7,) if n == 7 else ())
        for g in (identity, damped):
            for eps, values in truths(target, other, data, g, drop_last).items():
                assert max(values) <= bounds[eps] + 1e-3, (target, others, g.__name__, eps)
    for eps in EPSILONS:
        assert bounds[eps] < float(pair.delta(eps, Direction.REMOVE).lower)


def test_a_clone_bound_for_one_more_user_falls_below_the_truth(attained):
    """Mutant: counting t + 1 users (e.g. the partial batch's step, or ceil(n/B)) is not an upper
    bound: at n = 6 (t = 2) the clone bound for 3 users is below the attained truth at eps = 0.1."""
    from verifier.shuffle.clones import clone_delta_upper

    assert max(attained[0.1]) > clone_delta_upper(2.0 / SCALE, 3, 0.1) + 2e-3


def test_lower_end_meets_the_attained_truth(attained):
    """The shuffled method's LOWER ends (allocation of the attained pair) within 1% of the attained
    dataset's brute-force hockey stick, direction by direction (larger with larger)."""
    scheme = ShuffledBatches(Laplace(SCALE, 2.0), 6, 3, 1)
    for eps, values in attained.items():
        lows = sorted(next(b.value for b in ShuffledMethod().delta_bounds(scheme, eps, d) if b.side is Side.LOWER)
                      for d in (Direction.ADD, Direction.REMOVE))
        for low, truth in zip(lows, sorted(values)):
            assert low <= truth + 1e-3 and low >= 0.99 * truth, (eps, lows, values)


def _verdict(eps, delta):
    claim = parse_claim({
        "mechanism": {"name": "laplace", "scale": SCALE}, "neighboring": "replace_one", "epsilon": eps, "delta": delta,
        "scheme": {"name": "shuffled", "dataset_size": 6, "batch_size": 3, "epochs": 1},
    })
    return certify(claim).verdict.value


def test_certify_verdicts_at_one_percent(attained):
    """VIOLATED at 0.99 times the attained truth; CERTIFIED at 1.01 times the UPPER end (which the
    unamplified bound, 0.221 at eps = 0, would not certify); INCONCLUSIVE at the attained truth x 1.01."""
    scheme = ShuffledBatches(Laplace(SCALE, 2.0), 6, 3, 1)
    eps = 0.0
    truth = max(attained[eps])
    top = upper(scheme, eps)
    assert _verdict(eps, 0.99 * truth) == "VIOLATED"
    assert _verdict(eps, 1.01 * truth) == "INCONCLUSIVE"
    assert _verdict(eps, 1.01 * top) == "CERTIFIED"
    assert 1.01 * top < 1 - math.exp(-0.25)


def test_declines_where_the_clone_bound_does_not_amplify():
    """Gaussian steps with two full batches: the coupling leaves no room below the unamplified
    bound, so the method declines with the reason (certify lists it as skipped)."""
    scheme = ShuffledBatches(Gaussian(1.0, 2.0), 6, 3, 1)
    with pytest.raises(NotApplicable, match="unamplified|coupling"):
        ShuffledClones().epsilon_bounds(scheme, 1e-5, Direction.REMOVE)


def test_gaussian_epochs_bound_composes_below_the_unamplified_one():
    """sigma = 8, t = 1000 users, 10 epochs: an amplified UPPER end, below the 10-fold Gaussian's
    exact eps and above the attained pair's LOWER end; the coupling share stays within SLACK_SHARE."""
    from verifier.shuffle.batches import SLACK_SHARE, shuffled_epsilon_upper

    scheme = ShuffledBatches(Gaussian(8.0, 2.0), 10000, 10, 10)
    unamplified = Gaussian(8.0 / math.sqrt(10), 2.0).epsilon(1e-5, Direction.REMOVE).upper
    value, used = shuffled_epsilon_upper(scheme, 1e-5, unamplified)
    lower = max(next(b.value for b in ShuffledMethod().epsilon_bounds(scheme, 1e-5, d) if b.side is Side.LOWER)
                for d in (Direction.ADD, Direction.REMOVE))
    assert lower < value < 0.5 * unamplified
    assert used.slack(value) <= SLACK_SHARE * 1e-5
    assert used.delta(value) <= 1e-5


@pytest.fixture(scope="module")
def slack_export():
    from proofs import shuffled_reduction

    return shuffled_reduction.derive()["epochs_slack"]


@pytest.mark.parametrize("e0, d0, users, eps", [(0.5, 1e-3, 2, 0.0), (1.5, 2e-11, 1000, 0.3), (3.0, 1e-9, 10_000, 1.2), (10.0, 1e-30, 234, 20.0)])
def test_epoch_coupling_is_the_proved_export_and_below_fmt(e0, d0, users, eps, slack_export):
    """epoch_coupling against the sympy export epochs_slack of proofs/shuffled_reduction.py (E = 1,
    lambda = 1) in mpmath at 30 digits: an upper end within 1e-12 relative; and below FMT Thm 3.8's
    term (verifier.shuffle.approx.coupling_slack), which it replaces. A coupling of tv_other for the
    victim's share too (t tv_other) or without the (1 + e^eps) factor fails the first check."""
    import mpmath
    import sympy as sp

    from verifier.shuffle.approx import coupling_slack
    from verifier.shuffle.batches import epoch_coupling

    expr = slack_export
    subs = {sp.Symbol(name, **kw): value for (name, kw), value in zip(
        [("delta0", {"positive": True}), ("epsilon", {"real": True}), ("epsilon0", {"positive": True}),
         ("t", {"positive": True, "integer": True}), ("epochs", {"positive": True, "integer": True}), ("lambda", {"positive": True})],
        [sp.Float(d0, 40), sp.Float(eps, 40), sp.Float(e0, 40), users, 1, 1])}
    with mpmath.workdps(30):
        exact = float(sp.N(expr.subs(subs), 30))
    got = epoch_coupling(e0, d0, users, eps)
    assert exact <= got <= exact * (1 + 1e-12)
    assert got <= coupling_slack(e0, d0, users, eps)


def test_upper_end_never_below_the_attained_lower_end():
    """Property over small schemes (both noises, B not dividing n with and without drop_last, 1-3
    epochs): where shuffled-clones answers, its UPPER end on eps(delta) lies above the shuffled
    method's LOWER ends (the attained pair) and below the unamplified end. Catches a clone bound for
    the wrong number of users, lambda applied to the upper side's wrong branch, or a missing epoch."""
    from hypothesis import given, settings, strategies as st

    @settings(max_examples=12, deadline=None)
    @given(st.sampled_from(["laplace", "gaussian"]), st.integers(2, 60), st.integers(1, 4), st.integers(0, 3),
           st.integers(1, 3), st.booleans())
    def check(noise, users, batch, rest, epochs, drop_last):
        rest = min(rest, batch - 1)
        pair = Laplace(2.0, 2.0) if noise == "laplace" else Gaussian(6.0, 2.0)
        scheme = ShuffledBatches(pair, users * batch + rest, batch, epochs, drop_last)
        delta = 1e-3
        try:
            (found,) = ShuffledClones().epsilon_bounds(scheme, delta, Direction.REMOVE)
        except NotApplicable:
            return
        method = ShuffledMethod()
        lows = [next(b.value for b in method.epsilon_bounds(scheme, delta, d) if b.side is Side.LOWER) for d in (Direction.ADD, Direction.REMOVE)]
        unamplified = next(b.value for b in method.epsilon_bounds(scheme, delta, Direction.REMOVE) if b.side is Side.UPPER)
        assert max(lows) <= found.value < unamplified

    check()


@pytest.mark.slow
def test_upper_end_above_the_truth_with_a_released_partial_batch():
    """n = 7, B = 3 without drop_last: two full batches and a last batch of one record, three
    releases (a coarse 3-D grid, step 0.7: Riemann error well under the 10% margin). The UPPER end
    lambda*clone(2 users) + (1 - lambda)*Laplace pair lies above every dataset's truth."""
    scheme = ShuffledBatches(Laplace(SCALE, 2.0), 7, 3, 1, False)
    bounds = {eps: upper(scheme, eps) for eps in EPSILONS}
    grid = axes(3, 40.0, 0.7)
    cell = 0.7**3
    for target, other, others in DATASETS:
        for g in (identity, damped):
            p = batch_density((target, *others, 0.7), 3, g, "laplace", SCALE, grid)
            q = batch_density((other, *others, 0.7), 3, g, "laplace", SCALE, grid)
            assert abs(np.sum(p) * cell - 1) < 0.01
            for eps in EPSILONS:
                assert max(hockey(p, q, eps, cell), hockey(q, p, eps, cell)) <= bounds[eps], (target, others, g.__name__, eps)
