"""Adaptive composition over a finite family of step pairs: the Bellman recursion on the accumulated
privacy loss, with directed rounding.

An adversary runs T steps; before each it sees the outputs so far and picks the step pair from a
finite family F = {(P_m, Q_m)}. With L the sum of the chosen steps' losses ln(dP/dQ) under the first
neighbour, δ(ε) = E[(1 − e^{ε − L})_+] (Steinke 2022, Prop 7), and since the payoff depends on the
history only through L, the best adversary's value with k steps left at accumulated loss ℓ is

    W_0(ℓ) = (1 − e^{ε − ℓ})_+,    W_k(ℓ) = max_m E_{P_m}[W_{k−1}(ℓ + L_m)],    δ_F(ε) = W_T(0).

The recursion commutes with translations of ℓ, so with u = ℓ − ε one run gives every ε:
W_k(ℓ) = U_k(ℓ − ε), U_0(u) = (1 − e^{−u})_+, δ_F(ε) = U_T(−ε). U_k is non-decreasing in u, lies in
[(1 − e^{−u})_+, 1] (Jensen, E_P[e^{−L}] <= 1), and is convex in r = e^{−u} (for each fixed strategy
the payoff is convex in r, and U_k is their supremum).

Directed versions on the grid u_j = j·h (h = the members' common PLD step), each member given by
its REMOVE-direction discrete PLD (law of ln(P_m/Q_m) under P_m):

- UPPER (:attr:`Side.UPPER`): every member a DOMINATING PLD (stochastically larger than the PLD of
  a pair that dominates (P_m, Q_m) in Blackwell's sense). For convex non-increasing f with finite
  limit, E_P[f(Q/P)] does not decrease under Blackwell domination (data processing) nor under a
  stochastically larger loss when f(e^{−ℓ}) is non-decreasing in ℓ, so by induction the grid values
  are >= U_k: below the grid the value is taken as at its first point (U is non-decreasing), above
  it as 1, the mass at +∞ counts 1, and every floating-point error is added.
- LOWER: every member a DOMINATED PLD (a sub-probability stochastically smaller than the PLD of a
  pair Blackwell-dominated by (P_m, Q_m)); below the grid 0, above it (1 − e^{−u})_+, every error
  subtracted. The result is a lower bound on the value of the best adversary restricted to F, so
  a lower bound on δ(ε) of any mechanism whose adversary can realise every member of F adaptively.

Above the grid, for a class closed under swapping the two datasets (``symmetric``: the realisable
fixed-batch steps, whose set is closed under (A, B, C) -> (B, A, C), or a finite family closed under
the mirror (P, Q) -> (Q, P)), the value is taken from the grid itself: for every strategy's pair of
transcript laws, H_γ(P‖Q) = 1 − γ + γH_{1/γ}(Q‖P) (γ = e^{−u}; proofs/hockey_stick_duality.py),
and the supremum over the swapped runs is the same class's value, so

    U_k(u) = 1 − e^{−u} + e^{−u}·U_k(−u)          (exact, every u),

and a bound on U_k at −u (on the grid, or its first point's where −u lies below it: UPPER, U is
non-decreasing; 0 for LOWER) gives one on the same side at u, rounded outward. This replaces 1
(UPPER) and (1 − e^{−u})_+ (LOWER) above the grid, so the grid may stop at u = 0 (it must reach 0 for
the mirror of every point above it to lie below its top).

Convolutions: direct for short kernels (each entry a sum of k non-negative products, relative error
<= γ_k, Higham Lemma 3.1), else verifier's radix-2 FFT with the entrywise bound of
:mod:`verifier.pld.fft` (Higham Thm 24.2). That bound is absolute and scales with the operands' norms,
which the values near 1 (u > 0) dominate, while δ is read where U ~ 1e-5: over thousands of steps the
added bound would swamp it. With ``tilt`` λ > 0 the FFT convolves the tilted operands
Ũ(u) = U(u)·e^{−λu} and p̃_j = p_j·e^{λℓ_j} and multiplies the result back by e^{λu}:

    Σ_j p_j U(u + ℓ_j) = e^{λu} Σ_j p̃_j Ũ(u + ℓ_j)   (exactly),

so the error at u is e^{λu} times a bound set by the tilted norms, small where U is small. The tilted
kernel's mass E_P[e^{λL}] grows fast with λ (a Rényi moment of order λ + 1), and with it the norms: the
requested λ is halved until every member's tilted mass is at most 3/2 (0 after six halvings). λ is rounded
to a multiple of 2^-8, which makes every λ·u and λ·ℓ on the dyadic grid exact; each exponential is
trusted to 8 ulp (libm's documented accuracy, with a margin) and every product is rounded toward the
side with that margin.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import numpy.typing as npt

from verifier._directed import down, up
from verifier._types import Dominance, Side
from verifier._validation import check_integer
from verifier.errors import IncompatibleObjects, InvalidArgument
from verifier.pld.distribution import DiscretePLD
from verifier.pld.fft import DIRECT_LIMIT, Operand, convolve_bracket

__all__ = ["AdaptiveValue", "adaptive_value"]

_U = 2.0**-53


@dataclass(frozen=True)
class AdaptiveValue:
    """Bounds on U_T(u_j) at u_j = (first + j)·step, on ``side`` (see the module docstring)."""

    step: float
    first: int
    values: npt.NDArray[np.float64]
    side: Side

    def delta(self, epsilon: float) -> float:
        """A bound on δ_F(ε) = U_T(−ε) on :attr:`side`: the first grid point at or above −ε (UPPER,
        U is non-decreasing; 1 above the grid) or at or below it (LOWER; 0 below the grid)."""
        if not math.isfinite(epsilon):
            raise InvalidArgument("epsilon", epsilon, "must be finite")
        position = -epsilon / self.step - self.first  # exact: the step is a power of two
        if self.side is Side.UPPER:
            index = math.ceil(position)
            return 1.0 if index >= self.values.size else float(self.values[max(0, index)])
        index = math.floor(position)
        return 0.0 if index < 0 else float(self.values[min(index, self.values.size - 1)])

    def epsilon(self, delta: float) -> float:
        """A bound on ε_F(δ) = inf{ε: δ_F(ε) <= δ} on :attr:`side`, at a grid loss: UPPER, −u_j for
        the largest j with value <= δ (inf if none); LOWER, −u_j for the smallest j with value > δ
        (δ_F(−u_j) > δ there, so ε_F(δ) >= −u_j; −inf if none)."""
        if self.side is Side.UPPER:
            below = np.flatnonzero(self.values <= delta)
            return math.inf if below.size == 0 else -float((self.first + below[-1]) * self.step)
        above = np.flatnonzero(self.values > delta)
        return -math.inf if above.size == 0 else -float((self.first + above[0]) * self.step)


def adaptive_value(
    members: Sequence[DiscretePLD], steps: int, side: Side, u_low: float, u_high: float, *, tilt: float = 0.0,
    symmetric: bool = False, progress: Callable[[int], None] | None = None,
) -> AdaptiveValue:
    """U_T on the grid [u_low, u_high] (rounded outward to the members' step) for the family whose
    REMOVE-direction PLDs are ``members``: DOMINATING ones for ``side`` UPPER, DOMINATED for LOWER
    (see the module docstring). T = ``steps``; the work is T·|F| convolutions of the grid with a
    member's PLD. ``tilt`` is the λ of the tilted FFT (module docstring; about ln(1/δ)/ε for the δ
    and ε to be read, 0 for none); ``symmetric`` says the bounded class is closed under swapping the
    datasets, so the values above the grid come from the mirror identity (module docstring; needs
    ``u_high`` >= 0); ``progress`` is called with the number of steps done."""
    if not members:
        raise InvalidArgument("members", members, "the family must hold at least one step pair")
    t = check_integer("steps", steps, minimum=1)
    want = Dominance.DOMINATING if side is Side.UPPER else Dominance.DOMINATED
    h = members[0].step
    for m in members:
        if m.dominance is not want:
            raise IncompatibleObjects(f"dominance (an adaptive {side.name} bound needs {want.name} PLDs)", want.name, m.dominance.name)
        if m.step != h:
            raise IncompatibleObjects("grid step", h, m.step)
    if not (math.isfinite(u_low) and math.isfinite(u_high) and u_low < u_high):
        raise InvalidArgument("u range", (u_low, u_high), "must be finite with u_low < u_high")
    first, last = math.floor(u_low / h), math.ceil(u_high / h)
    grid = (first + np.arange(last - first + 1, dtype=np.float64)) * h
    if not (math.isfinite(tilt) and 0.0 <= tilt <= 64.0):
        raise InvalidArgument("tilt", tilt, "must be in [0, 64]")
    if symmetric and last < 0:
        raise InvalidArgument("u_high", u_high, "must be >= 0 for the mirror identity above the grid")
    values = _start(grid, side)
    stepper = _Stepper(members, first, grid.size, side, _moderate(members, round(tilt * 256) / 256), symmetric)
    for done in range(t):
        values = stepper.step(values, grid)
        if progress is not None:
            progress(done + 1)
    return AdaptiveValue(h, first, values, side)


def _moderate(members: Sequence[DiscretePLD], tilt: float) -> float:
    """``tilt`` halved until every member's tilted mass Σ p_j e^{λℓ_j} is at most 3/2 (module
    docstring); 0 if six halvings do not get there. Only the error bound's size depends on it."""
    for _ in range(7):
        if all(float(np.sum(m.probs * np.exp(tilt * m.losses()))) <= 1.5 for m in members):
            return tilt
        tilt = math.floor(tilt * 128) / 256
    return 0.0


def _start(grid: npt.NDArray[np.float64], side: Side) -> npt.NDArray[np.float64]:
    """U_0(u) = (1 − e^{−u})_+ rounded toward ``side`` (expm1 within 2 ulp, libm's documented
    accuracy with a margin, as in the hockey-stick kernel)."""
    raw = -np.expm1(-grid)
    slack = 4.0 * _U * np.abs(raw) + 1e-300
    return np.clip(raw + slack if side is Side.UPPER else raw - slack, 0.0, 1.0)


#: Trusted accuracy of numpy's exp (8 ulp), plus the product it enters: the tilt's relative margin.
_EXP_MARGIN = 20 * _U


class _Stepper:
    """One step of the recursion: the grid vector extended beyond both ends, correlated with each
    member's masses (tilted by e^{λℓ} on the FFT path), the errors moved to ``side``, the maximum
    over members.

    The FFT is cyclic of length N > the extended grid's length: the value at grid point i reads the
    extended entries i + low + offset .. i + low + offset + len − 1 (a member's kernel: ``offset``,
    ``len`` masses; low >= −offset, offset + len − 1 <= high), and a wrapped-around term would need
    an entry beyond the extended grid's end (N + i + low + offset >= N > length), so the entries read
    equal the linear correlation's. This halves the transform against zero-padding to length + len.
    Two members share one transform (packed as x + i·y, one bound for both parts); the reading and
    the shared bound are derived and checked in proofs/packed_fft.py."""

    def __init__(self, members: Sequence[DiscretePLD], first: int, size: int, side: Side, tilt: float, symmetric: bool = False) -> None:
        self.side = side
        self.size = size
        self.low = max(0, -min(m.offset for m in members))
        self.high = max(0, max(m.offset + m.probs.size - 1 for m in members))
        self.length = self.low + size + self.high
        h = members[0].step
        # e^{∓λu} on the extended grid and back on the grid (λu exact: λ ∈ 2^-8·ℤ, u ∈ h·ℤ).
        extended_u = (first - self.low + np.arange(self.length, dtype=np.float64)) * h
        self.untilt_in = self._directed(np.exp(-tilt * extended_u))
        self.tilt_out = self._directed(np.exp(tilt * (first + np.arange(size, dtype=np.float64)) * h))
        self.fft_size = 1 << self.length.bit_length()
        # Above the grid: u_i = (first + size − 1 + i)·h, mirrored at grid index −(first + size − 1 + i) − first.
        beyond = first + size - 1 + np.arange(1, self.high + 1)
        self.beyond_u = beyond * h
        self.mirror = None
        if symmetric:
            self.mirror = np.clip(-beyond - first, 0, size - 1)  # below the grid: its first point (clipped)
            self.mirror_inside = -beyond - first >= 0
            shrink = np.exp(-self.beyond_u)
            self.mirror_weight = down(shrink * (1 - _EXP_MARGIN)) if side is Side.UPPER else up(shrink * (1 + _EXP_MARGIN))
        # Short kernels are summed directly; the others, tilted, are transformed two at a time (the
        # second as the imaginary part: one inverse transform gives both, verifier.pld.fft.Operand).
        self.direct = []
        tilted = []
        for m in members:
            infinite = up(m.infinite_mass) if side is Side.UPPER else m.infinite_mass
            if m.probs.size <= DIRECT_LIMIT:
                self.direct.append((m.offset, np.ascontiguousarray(m.probs[::-1]), infinite))
            else:
                weights = self._directed(m.probs * self._directed(np.exp(tilt * m.losses())))
                tilted.append((self.low + m.offset + m.probs.size - 1, np.ascontiguousarray(weights[::-1]), infinite))
        self.pairs = [
            ([start for start, _, _ in chunk], Operand(chunk[0][1], self.fft_size, chunk[1][1] if len(chunk) > 1 else None))
            for chunk in (tilted[i : i + 2] for i in range(0, len(tilted), 2))
        ]
        infinities = [infinite for _, _, infinite in tilted]
        # The transformed members' maximum is taken before the un-tilting and the mass at +∞ (each a
        # monotone step, so the maximum's image bounds every member's on ``side``); the mass at +∞
        # added is the largest (UPPER) or smallest (LOWER) of theirs.
        self.infinite = (max(infinities) if side is Side.UPPER else min(infinities)) if infinities else 0.0

    def _directed(self, x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """x (a product of at most two roundings and one exp) moved past its error toward the side."""
        if self.side is Side.UPPER:
            return up(x * (1 + _EXP_MARGIN))
        return down(x * (1 - _EXP_MARGIN))

    def _extended(self, values: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        if self.side is Side.UPPER:
            below, above = np.full(self.low, values[0]), np.ones(self.high)
            if self.mirror is not None:  # 1 − e^{−u}(1 − U(−u)), every factor rounded toward 1
                rest = down(down(1.0 - values[self.mirror]) * self.mirror_weight)
                above = np.minimum(up(1.0 - rest), 1.0)
        else:
            below, above = np.zeros(self.low), _start(self.beyond_u, Side.LOWER)
            if self.mirror is not None:  # below the grid U >= 0: the mirror of (1 − e^{−u})·1
                mirrored = np.where(self.mirror_inside, values[self.mirror], 0.0)
                rest = up(up(1.0 - mirrored) * self.mirror_weight)
                above = np.maximum(above, np.maximum(down(1.0 - rest), 0.0))
        return np.concatenate([below, values, above])

    def step(self, values: npt.NDArray[np.float64], grid: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        extended = self._extended(values)
        best = None
        for offset, reversed_probs, infinite in self.direct:
            start = self.low + offset + reversed_probs.size - 1
            approx = np.convolve(extended, reversed_probs)[start : start + self.size]
            gamma = (reversed_probs.size + 1) * _U / (1 - (reversed_probs.size + 1) * _U)
            error = gamma * np.abs(approx) / (1 - gamma)
            best = self._finish(approx, error, infinite, best)
        if self.pairs:
            spectrum = Operand(self._directed(extended * self.untilt_in), self.fft_size)
            raw = None
            for starts, operand in self.pairs:
                real, imag, bound = convolve_bracket(spectrum, operand, cyclic=True)
                for start, part in zip(starts, (real, imag)):
                    tilted = part[start : start + self.size]
                    shifted = tilted + bound if self.side is Side.UPPER else np.maximum(tilted - bound, 0.0)
                    raw = shifted if raw is None else np.maximum(raw, shifted)
            best = self._finish(self._directed(self._directed(raw) * self.tilt_out), 0.0, self.infinite, best)
        if self.side is Side.UPPER:
            return np.minimum(best, 1.0)
        return np.maximum(best, _start(grid, Side.LOWER))

    def _finish(self, approx, error, infinite: float, best):
        """The step's value from a convolution ``approx`` within ``error``, plus the mass at +∞,
        rounded toward the side; the maximum with ``best`` so far."""
        if self.side is Side.UPPER:
            value = up(up(approx + error) + infinite) * (1 + 4 * _U)
        else:
            value = down(down(approx - error) + infinite) * (1 - 4 * _U)
        return value if best is None else np.maximum(best, value)
