"""The T-fold composition of the Laplace mechanism, exactly: its privacy-loss law in closed form.

One step of Laplace(b) with sensitivity Δ has loss ℓ ∈ [−ε0, ε0], ε0 = Δ/b (verifier.pairs.Laplace).
Write ℓ = ε0 − d with the *deficit* d ∈ [0, c], c = 2ε0. Under P the deficit has an atom 1/2 at 0
(y >= Δ), an atom e^{−ε0}/2 at c (y <= 0) and the density e^{−s/2}/4 on (0, c) (from the loss CDF
e^{(x−ε0)/2}/2 of the single step; Steinke 2022 §2.1). T steps compose to L = Tε0 − D, D = Σ d_i.
Condition on how many deficits are 0 (a), c (b) or inside (j = T − a − b): the j inside ones have
the joint density 4^{−j} e^{−(s_1+…+s_j)/2}, which depends on their sum s only, so their sum has the
density 4^{−j} e^{−s/2} V_j(s), where V_j(s) = Σ_i (−1)^i C(j, i) (s − ic)_+^{j−1} / (j−1)! is the
(j−1)-volume of {x ∈ [0, c]^j : Σx = s} (the Irwin–Hall density times c^j). Hence, with
coef = T!/(a! j! b!) 2^{−a} (e^{−ε0}/2)^b 4^{−j} and v_b = u − bc,

    E_P[e^{βD} 1{D < u}] = Σ_{a,j,b} coef · e^{βbc} · ( 1{v_b > 0} if j = 0 else H_j(β, v_b) ),
    H_j(β, v) = ∫_0^{min(v, jc)} e^{(β − 1/2)s} V_j(s) ds
              = Σ_{i: ic < w} (−1)^i C(j, i)/(j−1)! · e^{γic} ∫_0^{w − ic} e^{γt} t^{j−1} dt,  γ = β − 1/2,

and ∫_0^L e^{γt} t^n dt = n!/(−γ)^{n+1} [1 − e^{γL} Σ_{k<=n} (−γL)^k/k!]. The hockey-stick curve is
δ(ε) = E_P[(1 − e^{ε−L})_+] (Steinke 2022, Prop 7) = Σ coef·[H_j(0, v_b) − e^{−v_b} H_j(1, v_b)]
(j >= 1) + coef·(1 − e^{−v_b})_+ (j = 0) with u = Tε0 − ε, and the laws of L under P and Q follow
from the same sums (dQ = e^{−L} dP, E_P[e^D] = e^{Tε0}). Every term is evaluated in ball arithmetic;
where a ball cannot decide a branch (v_b at a breakpoint ic) both branches are joined, so the result
is a rigorous enclosure. The pair is symmetric (y ↦ Δ − y), so both directions are equal.
``proofs/laplace_composition.py`` checks the density against a numerical convolution.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from flint import arb, ctx

from verifier._types import Measure
from verifier._validation import check_integer
from verifier.pairs.base import DominatingPair
from verifier.pairs.laplace import Laplace

__all__ = ["LaplaceComposition", "LAPLACE_MAX_TIMES"]

#: Most steps composed by the closed form: a δ(ε) is a sum of O(T⁴/24) ball terms (about 0.1 s at
#: T = 24 on one core; ε(δ) bisects on ~100 of them). Longer compositions go to the PLD engine.
LAPLACE_MAX_TIMES = 24


@functools.lru_cache(maxsize=64)
def _coefficients(sensitivity: float, scale: float, times: int, bits: int) -> tuple[tuple[int, int, arb], ...]:
    """(b, j, coef) for every split a + j + b = T (module docstring), at ``bits`` of precision
    (keyed by the floats: a ball ε0 = Δ/b need not be exact, and inexact balls do not hash)."""
    half, quarter = arb(1) / 2, arb(1) / 4
    top = (-(arb(sensitivity) / arb(scale))).exp() / 2
    out = []
    for b in range(times + 1):
        for j in range(times - b + 1):
            a = times - b - j
            count = math.factorial(times) // (math.factorial(a) * math.factorial(j) * math.factorial(b))
            out.append((b, j, arb(count) * half**a * top**b * quarter**j))
    return tuple(out)


def _power_integral(gamma: arb, n: int, length: arb) -> arb:
    """∫_0^L e^{γt} t^n dt = n!/(−γ)^{n+1} [1 − e^{γL} Σ_{k<=n} (−γL)^k/k!] for γ ≠ 0."""
    x = -gamma * length
    partial, term = arb(1), arb(1)
    for k in range(1, n + 1):
        term = term * x / k
        partial += term
    return arb(math.factorial(n)) / (-gamma) ** (n + 1) * (1 - (gamma * length).exp() * partial)


def _decided(condition_true: bool, condition_false: bool) -> bool | None:
    """True / False when the balls decide a comparison, None when they do not."""
    return True if condition_true else False if condition_false else None


def _inner(j: int, gamma: arb, v: arb, c: arb) -> arb:
    """H_j(β, v) for j >= 1 and a ball v (module docstring), joining branches the ball cannot decide."""
    end = j * c
    w = end if v >= end else v if v < end else v.union(end)
    total = arb(0)
    for i in range(j):  # i = j contributes nothing: ic = jc >= w
        start = i * c
        inside = _decided(start < w, start >= w)
        if inside is False:
            break
        term = arb((-1) ** i * math.comb(j, i)) * (gamma * start).exp() * _power_integral(gamma, j - 1, w - start)
        total += term if inside else term.union(arb(0))
    return total / math.factorial(j - 1)


@dataclass(frozen=True)
class LaplaceComposition(DominatingPair):
    """``times`` independent Laplace(``scale``) steps of sensitivity ``sensitivity`` (module docstring):
    the product of ``times`` copies of :class:`verifier.pairs.Laplace`, with its exact loss law."""

    scale: float
    sensitivity: float
    times: int

    def __post_init__(self) -> None:
        step = Laplace(self.scale, self.sensitivity)  # validates scale and sensitivity
        object.__setattr__(self, "scale", step.scale)
        object.__setattr__(self, "sensitivity", step.sensitivity)
        object.__setattr__(self, "times", check_integer("times", self.times, minimum=1))

    @property
    def step(self) -> Laplace:
        return Laplace(self.scale, self.sensitivity)

    def float_range_issue(self) -> str | None:
        return self.step.float_range_issue()

    def swapped(self) -> "LaplaceComposition":
        return self

    def _eps0(self) -> arb:
        return arb(self.sensitivity) / arb(self.scale)

    def _sum(self, u: arb, term) -> arb:
        """Σ over the splits of coef · term(b, j, v_b), v_b = u − b·c."""
        e0 = self._eps0()
        c = 2 * e0
        total = arb(0)
        for b, j, coef in _coefficients(self.sensitivity, self.scale, self.times, ctx.prec):
            v = u - b * c
            if v <= 0:
                continue  # every term needs D < u, and D >= b·c
            total += coef * term(b, j, v, c)
        return total

    def _delta_arb(self, epsilon: arb) -> arb:
        """δ(ε) = E_P[(1 − e^{ε−L})_+] by the sums of the module docstring."""
        half = arb(1) / 2

        def term(b: int, j: int, v: arb, c: arb) -> arb:
            if j == 0:
                return (-(-v).expm1()).nonnegative_part()
            return _inner(j, -half, v, c) - (-v).exp() * _inner(j, half, v, c)

        return self._sum(self.times * self._eps0() - epsilon, term)

    def _below(self, u: arb, beta: int, inclusive: bool) -> arb:
        """E_P[e^{βD} 1{D < u}] (or D <= u when ``inclusive``), β ∈ {0, 1}."""
        gamma = arb(beta) - arb(1) / 2

        def term(b: int, j: int, v: arb, c: arb) -> arb:
            weight = (beta * b * c).exp()
            if j == 0:  # the atom D = b·c counts when v > 0; v = 0 exactly is added below
                return weight if v > 0 else weight.union(arb(0))
            return weight * _inner(j, gamma, v, c)

        total = self._sum(u, term)
        if inclusive:  # atoms of D at u exactly (j = 0, b·c = u), where the ball cannot exclude them
            e0 = self._eps0()
            c = 2 * e0
            for b, j, coef in _coefficients(self.sensitivity, self.scale, self.times, ctx.prec):
                v = u - b * c
                if j == 0 and v >= 0 and v <= 0:
                    total += coef * (beta * b * c).exp()
        return total

    def _law(self, x: arb, under: Measure, inclusive: bool) -> arb:
        """P(L <= x) (``inclusive``) or P(L < x) under ``under``: D >= u ⇔ L <= x, u = Tε0 − x."""
        e0t = self.times * self._eps0()
        u = e0t - x
        if under is Measure.P:
            below = self._below(u, 0, not inclusive)  # P(D < u) or P(D <= u)
            return 1 - below
        return 1 - (-e0t).exp() * self._below(u, 1, not inclusive)

    def _loss_cdf_arb(self, x: arb, under: Measure, inclusive: bool) -> arb:
        return self._widen(lambda: self._law(x, under, inclusive), x)

    def _loss_sf_arb(self, x: arb, under: Measure, inclusive: bool) -> arb:
        return 1 - self._widen(lambda: self._law(x, under, not inclusive), x)

    def _widen(self, law, x: arb) -> arb:
        """The law, joined with its value on the other side of an atom the ball x cannot place."""
        value = law()
        e0 = self._eps0()
        atoms = [(self.times - 2 * b) * e0 for b in range(self.times + 1)]
        if any(not (x < a) and not (x > a) and not (x == a) for a in atoms):
            return value.union(arb(0)).union(arb(1))
        return value

    def _renyi_arb(self, alpha: arb) -> arb:
        """D_α of a product is the sum of the steps' (Steinke 2022, Lemma 33.2)."""
        return self.times * self.step._renyi_arb(alpha)

    def _moment_arb(self, a: arb) -> arb:
        return self.step._moment_arb(a) ** self.times

    # ---- float-accuracy loss laws (midpoints of the ball laws) ----------------------------------

    def _float_law(self, x: npt.NDArray[np.float64], under: Measure, inclusive: bool, cdf: bool) -> npt.NDArray[np.float64]:
        out = np.empty(np.shape(x))
        lo, hi = -self.times * self.step.epsilon0, self.times * self.step.epsilon0
        for index, value in np.ndenumerate(np.asarray(x, dtype=float)):
            if value < lo or (value == lo and not inclusive):
                out[index] = 0.0 if cdf else 1.0
            elif value > hi or (value == hi and inclusive):
                out[index] = 1.0 if cdf else 0.0
            else:
                ball = (self._loss_cdf_arb if cdf else self._loss_sf_arb)(arb(float(value)), under, inclusive)
                out[index] = min(1.0, max(0.0, float(ball.mid())))
        return out

    def _loss_cdf(self, x: npt.NDArray[np.float64], under: Measure, inclusive: bool) -> npt.NDArray[np.float64]:
        return self._float_law(x, under, inclusive, True)

    def _loss_sf(self, x: npt.NDArray[np.float64], under: Measure, inclusive: bool) -> npt.NDArray[np.float64]:
        return self._float_law(x, under, inclusive, False)

    def _loss_quantile(self, q: npt.NDArray[np.float64], under: Measure) -> npt.NDArray[np.float64]:
        """Smallest x with P(L <= x) >= q, by bisection on the float CDF."""
        span = self.times * self.step.epsilon0
        qs = np.asarray(q, dtype=float)
        lo, hi = np.full(qs.shape, -span), np.full(qs.shape, span)
        below = self._loss_cdf(lo, under, True) >= qs
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            ok = self._loss_cdf(mid, under, True) >= qs
            hi, lo = np.where(ok, mid, hi), np.where(ok, lo, mid)
        return np.where(below, -span, hi)

    def _sample_loss(self, size: int, rng: np.random.Generator, under: Measure) -> npt.NDArray[np.float64]:
        total = np.zeros(size)
        for _ in range(self.times):
            total += self.step._sample_loss(size, rng, under)
        return total

