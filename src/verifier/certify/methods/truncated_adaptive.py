"""A LOWER bound for truncated Poisson sampling against an adaptive adversary ("truncated-adaptive"):
at every step the adversary picks, from the outputs so far, one of the truncated-attained instances.

The instances (:mod:`verifier.certify.methods.truncated_attained`): every other record's clipped
gradient at one value o of norm C, and the record's at an angle θ to −o (under replace-one against
its opposite), for θ in :data:`ANGLES`. A training run's gradients are functions of the parameters,
and the parameters are functions of the past outputs. So one pair of neighbouring datasets realises
every strategy: at each step the gradient map rotates the record's gradient to the angle the strategy
picks from the history. The records themselves stay fixed. Under replace-one the map may also swap
which of the two records gets x, so each instance enters in both orientations.

Each instance is taken post-processed, through its rounded log-likelihood ratio s on cells, with its
laws in ball arithmetic (:func:`~verifier.certify.methods.truncated_attained.step_laws`). The
adversary's choice is a function of the history, the same under both datasets, so the transcript's
statistic Σ_t s_t has exact laws: a forward pass over its lattice. At each step every state moves by
the law of the instance its strategy picks. The masses are float intervals: each convolution is a
sum of non-negative products, within γ_k of the exact sum (Higham 2002, Lemma 3.1), rounded outward.
Every event {Σ s >= τ} then gives P^T(S) − e^ε Q^T(S) <= δ(ε) (Steinke 2022, Prop 7), a LOWER bound,
less e^ε·T times the mass missing from each step's Q-law (the counts left out).

The strategy is planned in float: the Bellman recursion W_k(j) = max_θ E[W_{k−1}(j + s_θ)],
W_0(j) = (1 − e^{ε − j·LOSS_STEP})_+ (verifier.pld.adaptive's recursion, on the statistic's lattice).
verifier.pld.adaptive itself is not used for the bound: it needs each member as a DOMINATED PLD on a
dyadic grid, i.e. each step's loss ln(p/q) rounded down, which costs up to T grid steps of ε; the
forward pass keeps the statistic's exact laws and tests with the true masses.
The plan only affects tightness: any strategy is a real adversary. The best adversary mixes the
angles. Where truncation binds (n = 1000, q = 0.05, B = 40, σ = 2, 10 steps, δ = 1e-5, remove) no
single instance gives more than about 0.5894 in float (benchmarks/truncated_family.md; truncated-attained's
rigorous end is 0.58829), while this method gives ε >= 0.59711 (the float recursion: 0.5980). Under
replace-one both directions give 0.66527 (before: 0.65990 and 0.46357).
"""

from __future__ import annotations

import functools
import math
from typing import Sequence

import numpy as np
import numpy.typing as npt

from verifier._budget import Cost
from verifier._directed import arb_bound, down, up, with_precision
from verifier._types import Direction, Side
from verifier.certify.methods.truncated_attained import LOSS_STEP, MAX_CELLS, TruncatedAttained, cells, lower_end, step_laws
from verifier.errors import NotApplicable
from verifier.schemes import Scheme, TruncatedPoisson

__all__ = ["TruncatedAdaptive", "METHODS", "ANGLES", "MAX_SECONDS", "SEARCH_TOLERANCE", "cost_seconds", "delta_lower", "epsilon_lower", "family"]

#: Angles θ/π of the record against −o (under replace-one: of x against −x) the adversary picks from.
ANGLES = (0.0, 0.1, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5)
#: Absolute width in ε at which the search for the LOWER end of ε(δ) stops (tightness only: the
#: returned end was evaluated failing).
SEARCH_TOLERANCE = 2.0**-20
#: Labels whose P- and Q-masses are both below this are left out of a step's laws (their P-mass is
#: dropped, their Q-mass counted as missing).
_NEGLIGIBLE = 1e-40
#: Most seconds the estimated cost may reach: beyond it the method declines whatever the time budget
#: (one line saying why), as a run of hundreds of steps with labels over many σ would take hours.
MAX_SECONDS = 300.0
#: Planning constants of :func:`cost_seconds` (measured at load 1, with a margin): seconds per label
#: product of the forward pass, labels of a step's statistic per C/σ, evaluations of the search for
#: ε(δ), and seconds of :func:`~verifier.certify.methods.truncated_attained.step_laws` per cell.
_SECONDS_PER_PRODUCT = 3e-10
_LABELS_PER_RATIO = 2400.0
_EVALUATIONS = 30
_SECONDS_PER_CELL = 1e-6
_U = 2.0**-53


class _Member:
    """One instance's step laws on the statistic's lattice: labels ``base`` .. ``base`` + size − 1,
    lower ends of their P-masses, upper ends of their Q-masses, the P-masses' midpoints (for the
    plan), and an upper end of the Q-mass missing."""

    def __init__(self, first: Sequence, second: Sequence, base: int) -> None:
        with with_precision(128):
            p_lo = np.array([max(0.0, arb_bound(x, Side.LOWER)) for x in first])
            p_hi = np.array([arb_bound(x, Side.UPPER) for x in first])
            q_lo = np.array([max(0.0, arb_bound(x, Side.LOWER)) for x in second])
            q_hi = np.array([arb_bound(x, Side.UPPER) for x in second])
        keep = np.flatnonzero((p_hi >= _NEGLIGIBLE) | (q_hi >= _NEGLIGIBLE))
        lo, hi = int(keep[0]), int(keep[-1]) + 1
        self.base = base + lo
        self.p_lo, self.q_hi = p_lo[lo:hi], q_hi[lo:hi]
        self.p_mid = 0.5 * (self.p_lo + p_hi[lo:hi])  # the plan's masses
        # Σ q_lo of the kept labels is at least the represented mass: what is missing is at most 1 minus it
        kept_lo = float(np.sum(q_lo[lo:hi])) * (1 - (hi - lo + 2) * _U)
        self.missing = up(max(0.0, 1.0 - kept_lo))

    @property
    def top(self) -> int:
        return self.base + self.p_lo.size - 1


def cost_seconds(scheme: TruncatedPoisson) -> float:
    """Planning: the search for ε(δ)'s seconds, about _EVALUATIONS forward passes of T steps over
    T·L states, L ≈ _LABELS_PER_RATIO·C/σ labels per member, plus the members' step laws."""
    members = len(ANGLES) * (2 if scheme.replace_one else 1)
    labels = _LABELS_PER_RATIO * scheme.pair.sensitivity / scheme.pair.sigma
    steps = scheme.steps
    laws = len(ANGLES) * cells(scheme, math.pi / 4) * _SECONDS_PER_CELL
    return _EVALUATIONS * _SECONDS_PER_PRODUCT * members * steps * (steps * labels) * labels + laws


def _oriented(scheme: TruncatedPoisson, theta: float, direction: Direction) -> _Member:
    """The instance at ``theta`` with the first law the dataset of ``direction`` (REMOVE: the record
    present); in the ADD orientation the statistic is −s (as in truncated_attained)."""
    with_record, without, base = step_laws(scheme, theta)
    if direction is Direction.ADD:
        return _Member(without[::-1], with_record[::-1], -(base + len(with_record) - 1))
    return _Member(with_record, without, base)


@functools.lru_cache(maxsize=8)
def family(scheme: TruncatedPoisson, direction: Direction) -> tuple[_Member, ...]:
    """The members the adversary picks from in ``direction``: every angle of :data:`ANGLES` within
    :data:`~verifier.certify.methods.truncated_attained.MAX_CELLS` (θ = 0 always), in both
    orientations under replace-one (the swap is realisable there)."""
    angles = [turn * math.pi for turn in ANGLES if turn == 0.0 or cells(scheme, turn * math.pi) <= MAX_CELLS]
    orientations = (Direction.REMOVE, Direction.ADD) if scheme.replace_one else (direction,)
    return tuple(_oriented(scheme, theta, d) for theta in angles for d in orientations)


def _family(scheme: TruncatedPoisson, direction: Direction) -> tuple[_Member, ...]:
    """:func:`family`, one cache entry for both directions under replace-one (the same members)."""
    return family(scheme, Direction.REMOVE if scheme.replace_one else direction)


def _correlate(values: npt.NDArray[np.float64], masses: npt.NDArray[np.float64], base: int) -> npt.NDArray[np.float64]:
    """out[j] ≈ Σ_l masses[l]·values[j + base + l] (``values`` read as 0 outside; FFT, float, for the
    plan only): the expectation one step ahead, from state j, of a member with labels base .. base + len − 1."""
    from scipy.signal import fftconvolve

    full = fftconvolve(values, masses[::-1])  # full[k] = Σ_l masses[l]·values[k − (len − 1) + l]
    return _window(full, base + masses.size - 1, values.size)


def _spread(values: npt.NDArray[np.float64], masses: npt.NDArray[np.float64], base: int, chosen: npt.NDArray[np.bool_]) -> npt.NDArray[np.float64]:
    """out[j] = Σ_l masses[l]·values[j − base − l] over the ``chosen`` states j − base − l: their
    masses moved by the member's labels (a direct convolution of the chosen span: each entry a sum of
    non-negative products)."""
    states = np.flatnonzero(chosen)
    lo, hi = int(states[0]), int(states[-1]) + 1
    return _window(np.convolve(np.where(chosen[lo:hi], values[lo:hi], 0.0), masses), -(base + lo), values.size)


def _window(full: npt.NDArray[np.float64], start: int, size: int) -> npt.NDArray[np.float64]:
    """full[start .. start + size − 1], 0 where that runs outside ``full``."""
    out = np.zeros(size)
    lo, hi = max(0, -start), min(size, full.size - start)
    if hi > lo:
        out[lo:hi] = full[start + lo : start + hi]
    return out


def _plan(members: Sequence[_Member], steps: int, epsilon: float, first: int, size: int) -> list[npt.NDArray[np.int64]]:
    """The float Bellman recursion's choice of member at each step (0 .. steps − 1) for each state j
    (the statistic's sum, first + index) (module docstring; planning only)."""
    sums = (first + np.arange(size)) * LOSS_STEP
    value = np.maximum(-np.expm1(epsilon - sums), 0.0)
    choices = []
    for _ in range(steps):
        options = np.stack([_correlate(value, m.p_mid, m.base) for m in members])
        choices.append(np.argmax(options, axis=0))
        value = options.max(axis=0)
    return choices[::-1]  # choices[t]: the pick at step t, t steps done


def _forward(members: Sequence[_Member], choices: Sequence[npt.NDArray[np.int64]], first: int, size: int) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """(lower ends of the P-masses, upper ends of the Q-masses) of the transcript statistic's states
    after the strategy ``choices``, in float rounded outward (module docstring)."""
    p = np.zeros(size)
    q = np.zeros(size)
    p[-first] = q[-first] = 1.0
    terms = max(m.p_lo.size for m in members) + len(members) + 2
    gamma = terms * _U / (1 - terms * _U)
    for pick in choices:
        new_p, new_q = np.zeros(size), np.zeros(size)
        for index, m in enumerate(members):
            chosen = (pick == index) & ((p > 0.0) | (q > 0.0))
            if not chosen.any():
                continue
            new_p += _spread(p, m.p_lo, m.base, chosen)
            new_q += _spread(q, m.q_hi, m.base, chosen)
        p, q = np.maximum(down(new_p * (1 - 2 * gamma)), 0.0), up(new_q * (1 + 2 * gamma))
    return p, q


def delta_lower(scheme: TruncatedPoisson, epsilon: float, direction: Direction) -> float:
    """The LOWER bound max over τ of P^T(Σs >= τ) − e^ε Q^T(Σs >= τ) − e^ε·T·(missing Q-mass) for
    the strategy planned at ε (module docstring)."""
    members = _family(scheme, direction)
    steps = scheme.steps
    first = min(0, steps * min(m.base for m in members))
    size = max(0, steps * max(m.top for m in members)) - first + 1
    choices = _plan(members, steps, epsilon, first, size)
    p, q = _forward(members, choices, first, size)
    n = size + 2
    tail_p = np.maximum(down(np.cumsum(p[::-1])[::-1] * (1 - n * _U / (1 - n * _U))), 0.0)
    tail_q = up(np.cumsum(q[::-1])[::-1] * (1 + n * _U / (1 - n * _U)))
    kappa = up(math.exp(epsilon) * (1 + 4 * _U))
    missing = up(kappa * up(steps * max(m.missing for m in members)))
    best = float(np.max(down(tail_p - up(kappa * tail_q))))
    return max(0.0, down(best - missing))


def epsilon_lower(scheme: TruncatedPoisson, delta: float, direction: Direction) -> float:
    """A LOWER end of ε(δ) from :func:`delta_lower`
    (:func:`~verifier.certify.methods.truncated_attained.lower_end`). Under replace-one the family is
    closed under swapping the datasets, so both directions have the REMOVE value (computed once)."""
    return _epsilon_lower(scheme, delta, Direction.REMOVE if scheme.replace_one else direction)


@functools.lru_cache(maxsize=16)
def _epsilon_lower(scheme: TruncatedPoisson, delta: float, direction: Direction) -> float:
    return lower_end(lambda epsilon: delta_lower(scheme, epsilon, direction), delta, SEARCH_TOLERANCE)


class TruncatedAdaptive(TruncatedAttained):
    """truncated-attained's instances, the angle picked at every step from the history (module docstring)."""

    name = "truncated-adaptive"
    citation = (
        "truncated Poisson against an adaptive adversary: at each step one of the truncated-attained instances (angles "
        "0 to pi/2) picked from the history, the transcript tested by its summed rounded log-likelihood ratios "
        "(Steinke 2022, Prop 7), laws in ball arithmetic, the forward pass rounded outward"
    )
    cost = 2

    def estimate_cost(self, scheme: Scheme) -> Cost | None:
        if not self.supports(scheme):
            return None
        assert isinstance(scheme, TruncatedPoisson)
        return Cost(seconds=cost_seconds(scheme), what=f"t = {scheme.steps}")

    def _check(self, scheme: Scheme) -> TruncatedPoisson:
        assert isinstance(scheme, TruncatedPoisson)
        seconds = cost_seconds(scheme)
        if seconds > MAX_SECONDS:
            raise NotApplicable(f"the adaptive forward pass would take ~{seconds:.0f} s at t = {scheme.steps}, "
                                f"sigma/C = {scheme.pair.sigma / scheme.pair.sensitivity:g} (at most {MAX_SECONDS:g} s)")
        return scheme

    def _delta_lower(self, scheme: TruncatedPoisson, epsilon: float, direction: Direction) -> float:
        return delta_lower(scheme, epsilon, direction)

    def _epsilon_lower(self, scheme: TruncatedPoisson, delta: float, direction: Direction) -> float:
        return epsilon_lower(scheme, delta, direction)


METHODS = [TruncatedAdaptive()]
