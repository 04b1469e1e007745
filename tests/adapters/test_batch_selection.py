"""jax_privacy 2.0's batch selection strategies read by from_batch_selection (issue 42, Done-when 5):
one test per strategy, the model against the scheme written by hand and the participation pattern
the scheme assumes against the strategy's own batch_iterator (the real sampler); refusals are one
InvalidArgument naming what is missing. Skipped without jax_privacy."""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.peer

bs = pytest.importorskip("jax_privacy.batch_selection")

from verifier.adapters import from_batch_selection  # noqa: E402
from verifier.errors import InvalidArgument  # noqa: E402
from verifier.matrix import identity, toeplitz  # noqa: E402
from verifier.pairs import Gaussian  # noqa: E402
from verifier.schemes import Allocation, BandedPoisson, MatrixMechanism, MatrixPoisson, Poisson, TruncatedPoisson  # noqa: E402
from verifier.schemes import WithoutReplacement, WithReplacement  # noqa: E402


def _claim(strategy, n=1000, neighboring="add_or_remove", c_col=None):
    return from_batch_selection(strategy, noise_multiplier=1.5, num_examples=n, epsilon=2.0, delta=1e-5, neighboring=neighboring, c_col=c_col)


def _steps_of(strategy, n: int, seed: int = 0) -> list[list[int]]:
    """For every example, the steps whose batch holds it (with multiplicity), from batch_iterator."""
    seen: list[list[int]] = [[] for _ in range(n)]
    for step, batch in enumerate(strategy.batch_iterator(n, rng=seed)):
        for i in np.asarray(batch).tolist():
            seen[i].append(step)
    return seen


def test_cyclic_poisson_sampling():
    """b = 1: poisson; truncated: truncated_poisson over n; b = 4: banded_poisson with groups 4 and
    the examples' steps all congruent mod 4 (the real sampler); a 6-banded C with b = 4:
    matrix_poisson; add/remove with an equal split, and truncation with b > 1, refused."""
    assert _claim(bs.CyclicPoissonSampling(0.01, 1000)).model == Poisson(Gaussian(1.5), 0.01, 1000)
    assert _claim(bs.CyclicPoissonSampling(0.05, 10, truncated_batch_size=40)).model == TruncatedPoisson(Gaussian(1.5), 1000, 0.05, 40, 10)
    cyclic = bs.CyclicPoissonSampling(0.5, 40, cycle_length=4, partition_type=bs.PartitionType.INDEPENDENT)
    assert _claim(cyclic).model == BandedPoisson(Gaussian(1.5), identity(40), 4, 0.5)
    assert all(len({s % 4 for s in steps}) <= 1 for steps in _steps_of(cyclic, 50))
    c_col = [1.0, 0.5, 0.25]
    assert _claim(cyclic, c_col=c_col).model == BandedPoisson(Gaussian(1.5), toeplitz(40, c_col), 4, 0.5)
    wide = [1.0, 0.5, 0.25, 0.1, 0.05, 0.02]
    assert _claim(cyclic, c_col=wide).model == MatrixPoisson(Gaussian(1.5), toeplitz(40, wide), 0.5, 4)
    with pytest.raises(InvalidArgument, match="partition_type"):
        _claim(bs.CyclicPoissonSampling(0.5, 40, cycle_length=4))
    with pytest.raises(InvalidArgument, match="truncated_batch_size"):
        _claim(bs.CyclicPoissonSampling(0.5, 40, truncated_batch_size=10, cycle_length=4))


def test_balls_in_bins_sampling():
    """One epoch of DP-SGD: allocation over the b bins; more epochs (or a banded C): the matrix
    scheme with the same slot every epoch. The real sampler puts every example in exactly T/b steps,
    b apart (its bin). T not a multiple of b is refused."""
    assert _claim(bs.BallsInBinsSampling(10, 10)).model == Allocation(Gaussian(1.5), 10)
    three = bs.BallsInBinsSampling(30, 10)
    assert _claim(three).model == MatrixMechanism(Gaussian(1.5), identity(30), 10, 3)
    assert _claim(three, c_col=[1.0, 0.5]).model == MatrixMechanism(Gaussian(1.5), toeplitz(30, [1.0, 0.5]), 10, 3)
    assert all(len(steps) == 3 and steps == [steps[0], steps[0] + 10, steps[0] + 20] for steps in _steps_of(three, 40))
    with pytest.raises(InvalidArgument, match="iterations"):
        _claim(bs.BallsInBinsSampling(25, 10))


def test_fixed_batch_sampling():
    """Without replacement: without_replacement under replace-one (one copy moves the sum by 2C),
    batches of B distinct examples; with replacement: with_replacement, batches of B draws that can
    repeat an example (the real sampler). Add/remove and a matrix C are refused."""
    fixed = bs.FixedBatchSampling(100, 50)
    assert _claim(fixed, neighboring="replace_one").model == WithoutReplacement(Gaussian(1.5, 2.0), 1000, 100, 50)
    batches = list(fixed.batch_iterator(1000, rng=1))
    assert all(len(b) == 100 and len(set(b.tolist())) == 100 for b in batches)
    drawn = bs.FixedBatchSampling(100, 50, replace=True)
    assert _claim(drawn, neighboring="replace_one").model == WithReplacement(Gaussian(1.5, 2.0), 1000, 100, 50)
    assert any(len(set(b.tolist())) < 100 for b in drawn.batch_iterator(1000, rng=1))
    with pytest.raises(InvalidArgument, match="neighboring"):
        _claim(fixed)
    with pytest.raises(InvalidArgument, match="c_col"):
        _claim(fixed, neighboring="replace_one", c_col=[1.0, 0.5])


def test_b_min_sep_sampling():
    """min_sep = 1 excludes nothing: Poisson; sampling_prob = 1 with a warm start is balls-in-bins
    (the real sampler: every example in exactly T/b steps, b apart); any other case is refused with
    one line naming the exclusion window."""
    assert _claim(bs.BMinSepSampling(0.01, 100, 1)).model == Poisson(Gaussian(1.5), 0.01, 100)
    cycle = bs.BMinSepSampling(1.0, 20, 5)
    assert _claim(cycle).model == MatrixMechanism(Gaussian(1.5), identity(20), 5, 4)
    assert all(steps == [steps[0] + 5 * k for k in range(4)] for steps in _steps_of(cycle, 60))
    with pytest.raises(InvalidArgument, match="exclusion window") as refused:
        _claim(bs.BMinSepSampling(0.1, 100, 5))
    assert "\n" not in str(refused.value)
