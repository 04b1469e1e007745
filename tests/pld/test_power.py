"""Self-composition by one FFT power (verifier.pld.power) against exact rational convolution: the
survival sums keep their side at every loss (with and without wrap-around), the Chernoff window bound
holds, the removal from the top is safe, and the route agrees with binary exponentiation."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from verifier._types import Direction, Dominance
from verifier.errors import InvalidArgument
from verifier.pairs.gaussian import Gaussian
from verifier.pairs.subsampled import PoissonSubsampled
from verifier.pld import DiscretePLD, self_compose
from verifier.pld.construction import pld_sides_from_pair
from verifier.pld.power import (
    POWER_ERROR_LIMIT,
    _binary_self_compose,
    _chernoff_tail,
    _remove_from_top,
    power_self_compose,
    power_self_compose_pair,
    self_compose_pair,
)
from verifier.reference.convolution import exact_self_convolution

STEP = 2.0**-4

#: The power route's certified error E1 is ~m·√N·1e-18·‖p‖₂ on these small PLDs, the window tails
#: are <= tail_mass and the final trim moves <= tail_mass per end: 1e-12 is far above all of them.
CLOSE = Fraction(1, 10**12)


def _pld(probs, dominance, inf=0.0, offset=-3) -> DiscretePLD:
    return DiscretePLD(STEP, offset, np.asarray(probs, dtype=float), inf, 0.0, dominance, Direction.REMOVE)


def _random_probs(seed: int, n: int, total: float = 1.0) -> np.ndarray:
    p = np.random.default_rng(seed).random(n) ** 3
    return p / p.sum() * total


def _exact(pld: DiscretePLD, times: int) -> tuple[int, list[Fraction], Fraction]:
    """(offset, finite masses, mass at +∞) of the exact m-fold composition (Steinke 2022, Thm 9)."""
    finite = exact_self_convolution(pld.probs, times)
    s = sum((Fraction(float(x)) for x in pld.probs), Fraction(0))
    t = s + Fraction(pld.infinite_mass)
    return times * pld.offset, finite, t**times - s**times


def _survival(offset: int, masses, infinite, grid: range) -> list[Fraction]:
    """S(x) = Σ_{index >= x} masses + mass at +∞, exactly, for every grid index x in ``grid``."""
    by_index = {offset + i: Fraction(float(p)) if not isinstance(p, Fraction) else p for i, p in enumerate(masses)}
    out, running = {}, Fraction(infinite)
    for x in range(grid.stop - 1, grid.start - 1, -1):
        running += by_index.get(x, 0)
        out[x] = running
    return [out[x] for x in grid]


def _assert_one_sided(got: DiscretePLD, pld: DiscretePLD, times: int, close: Fraction | None = CLOSE) -> None:
    offset, finite, infinite = _exact(pld, times)
    lo = min(offset, got.offset) - 1
    hi = max(offset + len(finite), got.offset + got.probs.size) + 1
    grid = range(lo, hi)
    ours = _survival(got.offset, got.probs, Fraction(got.infinite_mass), grid)
    truth = _survival(offset, finite, infinite, grid)
    for x, a, b in zip(grid, ours, truth):
        if pld.dominance is Dominance.DOMINATING:
            assert a >= b, f"survival at index {x}: {float(a)} < exact {float(b)}"
        else:
            assert a <= b, f"survival at index {x}: {float(a)} > exact {float(b)}"
        if close is not None:
            assert abs(a - b) <= close, f"survival at index {x}: {float(a)} vs exact {float(b)}"


@pytest.mark.parametrize("dominance", [Dominance.DOMINATING, Dominance.DOMINATED])
@pytest.mark.parametrize("times,n,inf", [(2, 40, 0.0), (3, 25, 0.01), (7, 12, 0.0), (50, 6, 1e-3), (64, 5, 0.0)])
def test_one_sided_against_exact_self_convolution(dominance, times, n, inf) -> None:
    pld = _pld(_random_probs(times * 31 + n, n, 1.0 - inf), dominance, inf)
    got, report = power_self_compose(pld, times, tail_mass=1e-15)
    assert report.e1 <= POWER_ERROR_LIMIT
    _assert_one_sided(got, pld, times)
    assert self_compose(pld, times, tail_mass=1e-15).probs.size == got.probs.size  # self_compose takes this route


@pytest.mark.parametrize("dominance", [Dominance.DOMINATING, Dominance.DOMINATED])
@pytest.mark.parametrize("tail", [1e-3, 1e-6])
def test_forced_aliasing_stays_one_sided(dominance, tail) -> None:
    pld = _pld(_random_probs(5, 10), dominance)
    times = 60  # long enough that the power-of-two window (512 at tail 1e-6) is below the support (541)
    got, report = power_self_compose(pld, times, tail_mass=tail)
    assert report.size < times * 9 + 1  # the window is shorter than the support: mass wraps around
    assert max(report.tau_low, report.tau_high) <= tail
    _assert_one_sided(got, pld, times, close=Fraction(4 * tail))


@given(
    masses=st.lists(st.floats(0.0, 1.0), min_size=1, max_size=10).filter(lambda v: sum(v) > 0),
    times=st.integers(2, 24),
    dominance=st.sampled_from([Dominance.DOMINATING, Dominance.DOMINATED]),
    inf=st.sampled_from([0.0, 1e-9, 0.05]),
    tail=st.sampled_from([1e-15, 1e-5, 1e-2]),
)
def test_random_small_plds_keep_their_side(masses, times, dominance, inf, tail) -> None:
    probs = np.asarray(masses) / sum(masses) * (1.0 - inf)
    pld = _pld(probs, dominance, inf, offset=-2)
    got = self_compose(pld, times, tail_mass=tail)
    _assert_one_sided(got, pld, times, close=None)


@pytest.mark.parametrize("times,start", [(10, 50), (30, 170), (30, 120)])
def test_chernoff_tail_bounds_the_exact_tail(times, start) -> None:
    probs = _random_probs(3, 9)
    exact = exact_self_convolution(probs, times)
    truth = sum(exact[start:], Fraction(0))
    for s in (0.05, 0.3, 1.0, 4.0):
        bound = _chernoff_tail(probs, times, s, start, float(probs.sum()) * (1 + 1e-15))
        assert Fraction(bound) >= truth


@pytest.mark.parametrize("seed,mass", [(0, 0.0), (1, 1e-3), (2, 0.3), (3, 0.99), (4, 2.0)])
def test_remove_from_top_lowers_every_survival_sum(seed, mass) -> None:
    probs = _random_probs(seed, 30)
    probs[5] = 0.0
    out = _remove_from_top(probs, mass)
    assert np.all(out <= probs) and np.all(out >= 0)
    before = _survival(0, probs, 0, range(31))
    after = _survival(0, out, 0, range(31))
    for a, b in zip(after, before):
        assert a <= max(Fraction(0), b - Fraction(mass))


def test_falls_back_to_binary_exponentiation_when_the_power_error_is_large() -> None:
    # A DOMINATING PLD of mass 1.3: R^{m−1} makes E1 enormous, so the binary route is used.
    pld = _pld(_random_probs(9, 30, 1.3), Dominance.DOMINATING)
    _, report = power_self_compose(pld, 200)
    assert report.e1 > POWER_ERROR_LIMIT
    got = self_compose(pld, 200)
    binary = _binary_self_compose(pld, 200, 1e-15)
    assert got.offset == binary.offset and np.array_equal(got.probs, binary.probs)
    assert got.infinite_mass == binary.infinite_mass


def test_times_one_and_invalid_arguments() -> None:
    pld = _pld(_random_probs(1, 5), Dominance.DOMINATED)
    assert self_compose(pld, 1) is pld
    with pytest.raises(InvalidArgument, match="times"):
        self_compose(pld, 0)
    with pytest.raises(InvalidArgument, match="pld"):
        self_compose(np.ones(3), 2)


def test_zero_finite_part_keeps_only_the_infinite_mass() -> None:
    pld = DiscretePLD(STEP, 2, np.zeros(3), 0.5, 0.0, Dominance.DOMINATING, Direction.ADD)
    got = self_compose(pld, 3)
    assert got.probs.tolist() == [0.0] and got.infinite_mass >= 0.5**3


def test_agrees_with_binary_route_on_a_subsampled_gaussian() -> None:
    """Not bitwise: both are one-sided, and they differ by less than their combined error budgets."""
    sides = pld_sides_from_pair(PoissonSubsampled(Gaussian(1.0), 0.01), Direction.REMOVE, 2.0**-8)
    eps = [0.25, 0.5, 1.0, 1.5, 2.0]
    deltas = {}
    for pld in sides:
        new, report = power_self_compose(pld, 1000)
        assert report.e1 <= POWER_ERROR_LIMIT
        old = _binary_self_compose(pld, 1000, 1e-15)
        slack = new.error_budget + old.error_budget
        assert np.all(np.abs(new.delta(eps) - old.delta(eps)) <= slack)
        deltas[pld.dominance] = new.delta(eps)
    assert np.all(deltas[Dominance.DOMINATED] <= deltas[Dominance.DOMINATING])


def test_long_double_is_at_least_double() -> None:
    """The bound is derived from np.finfo; on x86-64 Linux long double is the 80-bit format."""
    assert np.finfo(np.longdouble).eps <= np.finfo(np.float64).eps


@pytest.mark.parametrize("dominance", [Dominance.DOMINATING, Dominance.DOMINATED])
@pytest.mark.parametrize("times,tail", [(40, 1e-6), (80, 1e-9)])  # windows 256 < 281, 512 < 561
def test_two_atom_pld_wraps_lattice_atoms_safely(dominance, times, tail) -> None:
    """Masses 1/2 at both ends: the composition is a binomial law on a coarse lattice, so each tail the
    window cuts is a few whole atoms whose wrap-around the Chernoff charges must cover."""
    probs = np.zeros(8)
    probs[0] = probs[-1] = 0.5
    pld = _pld(probs, dominance)
    got, report = power_self_compose(pld, times, tail_mass=tail)
    assert report.size < times * 7 + 1
    _assert_one_sided(got, pld, times, close=Fraction(4 * tail))


@pytest.mark.parametrize("times,sizes,tail", [(7, (12, 30), 1e-15), (30, (6, 9), 1e-15), (60, (10, 8), 1e-6)])
def test_packed_pair_is_one_sided_for_both_plds(times, sizes, tail) -> None:
    """Two PLDs of different lengths and sides, self-composed through one packed forward transform
    (power_self_compose_pair; the last case forces wrap-around): each keeps its side against its own
    exact composition, as closely as on its own."""
    upper = _pld(_random_probs(times + 1, sizes[0], 1.0 - 1e-4), Dominance.DOMINATING, 1e-4)
    lower = _pld(_random_probs(times + 2, sizes[1]), Dominance.DOMINATED, offset=-5)
    (got_upper, rep_upper), (got_lower, rep_lower) = power_self_compose_pair(upper, lower, times, tail_mass=tail)
    assert rep_upper.size == rep_lower.size  # one common transform length
    if tail > 1e-12:
        assert rep_upper.size < times * (sizes[0] - 1) + 1  # the window is shorter: mass wraps around
    assert max(rep_upper.e1, rep_lower.e1) <= POWER_ERROR_LIMIT
    close = CLOSE if tail < 1e-12 else Fraction(4 * tail)
    _assert_one_sided(got_upper, upper, times, close)
    _assert_one_sided(got_lower, lower, times, close)
    pair = self_compose_pair(upper, lower, times, tail_mass=tail)
    assert pair[0].probs.size == got_upper.probs.size and pair[1].probs.size == got_lower.probs.size


def test_packed_split_matches_an_exact_dft() -> None:
    """rfft_pair_power2 against an mpmath DFT of each vector: within the packed transform's Higham
    bound plus the split's rounding (the bound power_self_compose_pair charges)."""
    import mpmath

    from verifier.pld.radix2 import higham_constant, rfft_pair_power2, twiddles

    x, y = _random_probs(3, 20), _random_probs(4, 13)
    size = 32
    got = rfft_pair_power2(x, y, size, np.longdouble)
    u = float(np.finfo(np.longdouble).eps) / 2
    c = higham_constant(size, u, twiddles(size, np.longdouble).mu)
    packed = float(np.sqrt(np.sum(x * x) + np.sum(y * y)))
    with mpmath.workdps(40):
        for vec, spec in zip((x, y), got):
            err2 = mpmath.mpf(0)
            for k in range(size):  # the full Hermitian spectrum
                exact = mpmath.fsum(mpmath.mpf(float(v)) * mpmath.expjpi(-2 * mpmath.mpf(j * k) / size) for j, v in enumerate(vec))
                value = spec[k] if k <= size // 2 else np.conj(spec[size - k])
                err2 += abs(mpmath.mpc(str(value.real), str(value.imag)) - exact) ** 2
            bound = c * np.sqrt(size) * packed + 2 * u * float(np.sqrt(np.sum(np.abs(spec) ** 2) * 2))
            assert float(mpmath.sqrt(err2)) <= bound
