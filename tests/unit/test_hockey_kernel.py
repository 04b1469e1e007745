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


@given(
    losses=st.lists(st.floats(-30, 30, allow_nan=False), min_size=1, max_size=80),
    seed=st.integers(0, 2**32 - 1),
    epsilons=st.lists(st.floats(-35, 35, allow_nan=False), min_size=1, max_size=6),
    p_inf=st.sampled_from([0.0, 1e-12, 0.25]),
)
def test_suffix_sums_bracket_the_exact_sum(losses, seed, epsilons, p_inf):
    """validated_delta_many (suffix sums, for many ε) against the exact sum at 50 digits, with ε also
    placed just below and at atoms and below all of them. Catches a suffix index off by one (an atom
    counted twice) and e^{ε−c} and e^{c−ε} swapped."""
    from verifier.hockey import validated_delta_many

    rng = np.random.default_rng(seed)
    ell = np.sort(np.array(losses))
    probs = rng.dirichlet(np.ones(ell.size)) * (1.0 - p_inf)
    eps = np.sort(np.concatenate([epsilons, ell[:3], np.nextafter(ell[:3], -np.inf), ell[:3] - 1e-9]))
    bracket = validated_delta_many(ell, probs, eps, p_inf)
    exact = reference_delta(ell.tolist(), probs.tolist(), p_inf, eps.tolist(), dps=50)
    for i, value in enumerate(exact):
        assert mpmath.mpf(bracket.lower[i]) <= value <= mpmath.mpf(bracket.upper[i])
        assert bracket.upper[i] - bracket.lower[i] <= 2.0**-19 * max(float(value), 1e-300) + 1e-300


def test_suffix_sums_on_a_fine_grid_match_the_kernel():
    """A Gaussian-shaped PLD on a grid of 2^-11 (30000 atoms, what verifier.pld.subsample queries),
    5000 off-grid ε: the suffix-sum bracket contains the kernel's and is at most 1e-9 wider, relative."""
    from verifier.hockey import validated_delta, validated_delta_many

    ell = np.arange(-15000, 15000) * 2.0**-11
    probs = np.exp(-0.5 * (ell - 1.0) ** 2)
    probs /= probs.sum() * (1 + 1e-12)
    eps = np.sort(np.random.default_rng(3).uniform(-9.0, 8.0, 5000))
    fast, slow = validated_delta_many(ell, probs, eps, 0.0), validated_delta(ell, probs, eps, 0.0)
    assert np.all(fast.lower <= slow.lower) and np.all(fast.upper >= slow.upper)
    assert np.all(fast.upper - fast.lower <= 1e-9 * slow.upper + 1e-300)


def test_suffix_sums_where_they_cancel():
    """200 atoms within 2e-7 of each other just above ε (and mass elsewhere): the suffix terms cancel
    to 1e-7 of the suffix mass, so an error bound relative to the result, not to the suffix mass,
    would miss the exact sum (mpmath, 50 digits)."""
    from verifier.hockey import validated_delta_many

    ell = np.sort(np.concatenate([1.0 + np.arange(200) * 1e-9, [-2.0, 0.5, 3.0]]))
    probs = np.random.default_rng(7).dirichlet(np.ones(ell.size))
    eps = np.array([1.0 - 1e-12, 1.0 - 1e-8, 1.0 + 5e-8, 0.0])
    bracket = validated_delta_many(ell, probs, eps, 0.0)
    exact = reference_delta(ell.tolist(), probs.tolist(), 0.0, eps.tolist(), dps=50)
    for i, value in enumerate(exact):
        assert mpmath.mpf(bracket.lower[i]) <= value <= mpmath.mpf(bracket.upper[i])


@pytest.mark.parametrize(
    ("losses", "probs", "epsilons"),
    [
        # suffix weights p·e^{c−ℓ} = 1e-62·e^{-599} underflow, then scaled back up by e^{ε−c} = e^{598}
        (np.concatenate([[-300.0], np.linspace(299.0, 300.0, 200)]), np.concatenate([[1e-3], np.full(200, 1e-62)]), [298.0, 299.0, 299.5]),
        (np.concatenate([[0.0], np.linspace(10.0, 20.0, 300)]), np.concatenate([[0.5], np.full(300, 3e-310)]), [9.0, 15.0, 19.0]),
        # masses themselves below the normal range: every product underflows
        (np.linspace(-20.0, 20.0, 300), np.full(300, 3e-320), [-19.0, 0.0, 19.0]),
    ],
    ids=["scaled-underflow", "subnormal-masses", "all-subnormal"],
)
def test_underflowing_products_stay_inside_the_bracket(losses, probs, epsilons):
    """Masses near and below the normal range, against the exact sum at 50 digits. A product that
    underflows has only an absolute error (2^-1075), which a relative error bound misses. Mutants
    caught: the suffix sums' absolute allowance not scaled by e^{ε−c} (first two cases: the bracket
    sits 1e-2 and 1e-7 relative above or below the truth) and the kernel without one (third case)."""
    from verifier.hockey import validated_delta, validated_delta_many

    exact = reference_delta(losses.tolist(), probs.tolist(), 0.0, list(epsilons), dps=50)
    eps = np.array(epsilons)
    for bracket in (validated_delta(losses, probs, eps, 0.0), validated_delta_many(losses, probs, eps, 0.0)):
        for i, value in enumerate(exact):
            assert mpmath.mpf(bracket.lower[i]) <= value <= mpmath.mpf(bracket.upper[i])
