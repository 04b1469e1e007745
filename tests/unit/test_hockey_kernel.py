"""The compiled δ(ε) kernel against its slow mpmath twin (exact sum at 50 digits)."""

import mpmath
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from verifier.errors import InvalidArgument
from verifier.hockey import discrete_pld_delta
from verifier.reference.pairs import discrete_pld_delta as reference_delta

losses_strategy = st.lists(st.floats(-30, 30, allow_nan=False), min_size=1, max_size=60)


@given(
    losses=losses_strategy,
    seed=st.integers(0, 2**32 - 1),
    epsilons=st.lists(st.floats(-5, 5, allow_nan=False), min_size=1, max_size=6),
    p_inf=st.sampled_from([0.0, 1e-12, 0.25]),
)
def test_kernel_brackets_the_exact_sum(losses, seed, epsilons, p_inf):
    rng = np.random.default_rng(seed)
    ell = np.sort(np.array(losses))
    probs = rng.dirichlet(np.ones(ell.size)) * (1.0 - p_inf)
    bracket = discrete_pld_delta(ell, probs, epsilons, infinite_mass=p_inf)
    exact = reference_delta(ell.tolist(), probs.tolist(), p_inf, list(epsilons), dps=50)
    for i, value in enumerate(exact):
        assert mpmath.mpf(bracket.lower[i]) <= value <= mpmath.mpf(bracket.upper[i])
        # the error bound is honest but not wasteful: relative width below 1e-14
        assert bracket.upper[i] - bracket.lower[i] <= 1e-14 * max(float(value), 1e-300) + 1e-300


def test_kernel_with_a_million_atoms_stays_tight():
    ell = np.linspace(-5.0, 5.0, 1_000_001)
    probs = np.exp(-0.5 * ell**2)
    probs /= probs.sum()
    b = discrete_pld_delta(ell, probs, [0.0, 1.0, 4.9])
    assert np.all(b.relative_width < 1e-13)


def test_kernel_input_errors_name_the_parameter():
    with pytest.raises(InvalidArgument, match="losses"):
        discrete_pld_delta([1.0, 0.0], [0.5, 0.5], [0.0])
    with pytest.raises(InvalidArgument, match="probs"):
        discrete_pld_delta([0.0, 1.0], [0.5], [0.0])
    with pytest.raises(InvalidArgument, match="probs"):
        discrete_pld_delta([0.0, 1.0], [-0.5, 1.5], [0.0])
    with pytest.raises(InvalidArgument, match="epsilons"):
        discrete_pld_delta([0.0], [1.0], [float("nan")])
