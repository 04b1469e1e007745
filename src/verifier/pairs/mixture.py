"""The pair (Σ_j w_j N(c_j, σ²), N(0, σ²)) of a one-dimensional Gaussian mixture with non-negative
means against the centred Gaussian: the per-step pair of conditional composition for matrix
mechanisms (Schuchardt & Kalinin, eqs. 7–8 and Corollary 4.4).

The mixture is given by its distinct means 0 <= c_1 < … < c_m and its tail probabilities
T_j = P(z >= j) (T_1 = 1, non-increasing, > 0), so the weights w_j = T_j − T_{j+1} sum to one exactly
and a stochastically larger mixture (Lemma 4.2) is "larger tails". In units of σ (y = x/σ,
ν_j = c_j/σ) the privacy loss ℓ(y) = log Σ_j w_j e^{ν_j y − ν_j²/2} is increasing in y, so:

- REMOVE: δ(ε) = max_y g(y), g(y) = Σ_j w_j Φ̄(y − ν_j) − e^ε Φ̄(y), attained where ℓ(y*) = ε;
- ADD:    δ(ε) = max_y h(y), h(y) = Φ(y) − e^ε Σ_j w_j Φ(y − ν_j), attained where ℓ(y*) = −ε.

Rigorous balls: y* is located in floating point and bracketed by a verified sign change of ℓ − ε;
the value at the float point ŷ is a lower end (δ is the maximum), and since g'(y*) = 0,
δ <= g(ŷ) + ½·max|g''|·w² over the verified bracket of width w (Taylor), which is the upper end.
Where ε lies below inf ℓ = log w_1 (c_1 = 0), the optimal event is everything: δ = 1 − e^ε (REMOVE);
for ADD where ε >= −log w_1 it is empty: δ = max(0, 1 − e^ε).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from flint import arb

from verifier._types import Measure
from verifier._validation import check_positive, check_real_array
from verifier.errors import InvalidArgument, NotApplicable
from verifier.pairs.base import DominatingPair
from verifier.pairs.gaussian import _phi

__all__ = ["GaussianMixture", "WeightedGaussianMixture", "mixture_of_gaussians"]

_BISECTION = 90
#: Relative accuracy of the floating-point root ŷ; the verified bracket starts at 4 times it (the
#: Taylor slack ½·max|g''|·w² stays ~1e-26 relative, far below the 60-bit target of the balls).
_ROOT_TOLERANCE = 1e-13


@dataclass(frozen=True)
class GaussianMixture(DominatingPair):
    """(Σ_j w_j N(c_j, σ²), N(0, σ²)) with ``means`` c (strictly increasing, >= 0) and ``tails``
    T_j = P(z >= j) (T_1 = 1); REMOVE orientation unless ``add_orientation``. See the module doc."""

    sigma: float
    means: tuple
    tails: tuple
    add_orientation: bool = False

    def __post_init__(self) -> None:
        sigma = check_positive("sigma", self.sigma)
        c = check_real_array("means", self.means)
        t = check_real_array("tails", self.tails)
        if c.ndim != 1 or c.size == 0 or c.shape != t.shape:
            raise InvalidArgument("means", list(c.ravel()), f"means and tails must be lists of the same length >= 1 (tails has {t.size})")
        if c[0] < 0 or np.any(np.diff(c) <= 0):
            raise InvalidArgument("means", list(c), "must be non-negative and strictly increasing")
        if t[0] != 1.0 or np.any(np.diff(t) > 0) or t[-1] <= 0:
            raise InvalidArgument("tails", list(t), "must start at 1 and be non-increasing and positive (P(z >= j))")
        object.__setattr__(self, "sigma", sigma)
        object.__setattr__(self, "means", tuple(float(x) for x in c))
        object.__setattr__(self, "tails", tuple(float(x) for x in t))
        object.__setattr__(self, "_hint", [None])  # table of ℓ for Newton's starting points (not part of the value)

    def swapped(self) -> "GaussianMixture":
        return GaussianMixture(self.sigma, self.means, self.tails, not self.add_orientation)

    # ---- helpers (units of σ) --------------------------------------------------------------------

    @property
    def _nu(self) -> npt.NDArray[np.float64]:
        return np.array(self.means) / self.sigma

    @property
    def _weights(self) -> npt.NDArray[np.float64]:
        t = np.array(self.tails)
        return t - np.append(t[1:], 0.0)

    def _weights_arb(self) -> list[arb]:
        t = [arb(x) for x in self.tails] + [arb(0)]
        return [t[j] - t[j + 1] for j in range(len(self.tails))]

    def _nu_arb(self) -> list[arb]:
        s = arb(self.sigma)
        return [arb(c) / s for c in self.means]

    def _ell(self, y: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """ℓ(y) = log Σ w_j e^{ν_j y − ν_j²/2} (REMOVE loss), vectorised."""
        nu, w = self._nu, self._weights
        keep = w > 0
        z = np.asarray(y, dtype=float)[..., None] * nu[keep] - nu[keep] ** 2 / 2 + np.log(w[keep])
        top = z.max(axis=-1)
        return top + np.log(np.exp(z - top[..., None]).sum(axis=-1))

    def _ell_arb(self, y: arb) -> arb:
        terms = [w * (n * y - n * n / 2).exp() for w, n in zip(self._weights_arb(), self._nu_arb())]
        return sum(terms, arb(0)).log()

    def _max_loss_arb(self) -> arb | None:
        """REMOVE: ℓ(y) grows without bound as y → ∞ when some c_j > 0 (0 when the mixture is N(0)).
        ADD: −ℓ(y) → −log w_1 as y → −∞ when c_1 = 0 (its supremum, ℓ being increasing), else +∞."""
        if not self.add_orientation:
            return None if self.means[-1] > 0.0 else arb(0)
        return -self._weights_arb()[0].log() if self.means[0] == 0.0 else None

    def _inf_loss(self) -> float:
        """inf ℓ = log w_1 when c_1 = 0, else −∞."""
        return math.log(self._weights[0]) if self.means[0] == 0.0 and self._weights[0] > 0 else -math.inf

    def _y_of_loss(self, x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """ℓ^{-1}(x) by vectorised bisection (−∞ below inf ℓ)."""
        x = np.asarray(x, dtype=float)
        nu_max = float(self._nu.max())
        lo = np.full(x.shape, -60.0) - np.abs(np.where(np.isfinite(x), x, 0.0)) / max(nu_max, 1e-300)
        hi = 60.0 + nu_max + np.abs(np.where(np.isfinite(x), x, 0.0)) / max(nu_max, 1e-300)
        for _ in range(_BISECTION):
            mid = (lo + hi) / 2
            below = self._ell(mid) < x
            lo = np.where(below, mid, lo)
            hi = np.where(below, hi, mid)
        y = (lo + hi) / 2
        return np.where(x <= self._inf_loss(), -np.inf, np.where(x == np.inf, np.inf, y))

    def _root(self, level: float) -> float:
        """ℓ^{-1}(level) for level > inf ℓ: safeguarded Newton on the convex, increasing ℓ (scalar)."""
        nu = [float(v) for v in self._nu]
        logw = [math.log(w) if w > 0 else -math.inf for w in self._weights]

        def ell_and_slope(y: float) -> tuple[float, float]:
            z = [lw + n * y - n * n / 2 for lw, n in zip(logw, nu)]
            top = max(z)
            e = [math.exp(v - top) for v in z]
            total = sum(e)
            return top + math.log(total), sum(n * v for n, v in zip(nu, e)) / total

        if self._hint[0] is None:  # a table of ℓ for the starting points (Newton then takes 2–3 steps)
            ys = np.linspace(-60.0, 60.0 + max(nu), 8193)
            self._hint[0] = (self._ell(ys), ys)
        table, ys = self._hint[0]
        y = float(np.interp(level, table, ys))
        lo, hi = -math.inf, math.inf
        for _ in range(_BISECTION):
            value, slope = ell_and_slope(y)
            if value < level:
                lo = y
            else:
                hi = y
            step = y - (value - level) / slope if slope > 0 else math.nan
            if not lo < step < hi:  # safeguard: bisect (or expand) inside the bracket
                step = (lo + hi) / 2 if math.isfinite(lo) and math.isfinite(hi) else (y - 1 - 2 * abs(y) if value >= level else y + 1 + 2 * abs(y))
            if abs(step - y) <= _ROOT_TOLERANCE * max(1.0, abs(y)):
                return step
            y = step
        return y

    def _cdf_y(self, y: npt.NDArray[np.float64], original_p: bool) -> npt.NDArray[np.float64]:
        from scipy import special

        y = np.asarray(y, dtype=float)
        if not original_p:
            return special.ndtr(y)
        return (special.ndtr(y[..., None] - self._nu) * self._weights).sum(axis=-1)

    def _quantile_y(self, q: npt.NDArray[np.float64], original_p: bool) -> npt.NDArray[np.float64]:
        from scipy import special

        q = np.asarray(q, dtype=float)
        if not original_p:
            return special.ndtri(q)
        lo = np.full(q.shape, -60.0)
        hi = np.full(q.shape, 60.0 + float(self._nu.max()))
        for _ in range(_BISECTION):
            mid = (lo + hi) / 2
            below = self._cdf_y(mid, True) < q
            lo = np.where(below, mid, lo)
            hi = np.where(below, hi, mid)
        return np.where(q <= 0, -np.inf, np.where(q >= 1, np.inf, hi))

    # ---- profile --------------------------------------------------------------------------------

    def _gain(self, y: arb, epsilon: arb, second: bool) -> arb:
        """g (REMOVE) or h (ADD) at y, or its second derivative (``second``)."""
        e = epsilon.exp()
        w, nu = self._weights_arb(), self._nu_arb()
        if not second:
            mix = sum((wj * _phi(nj - y) for wj, nj in zip(w, nu)), arb(0))  # Σ w Φ̄(y − ν)
            if self.add_orientation:
                return _phi(y) - e * (1 - mix)
            return mix - e * _phi(-y)
        pdf = lambda z: (-z * z / 2).exp() / (2 * arb.pi()).sqrt()  # noqa: E731
        dmix = sum((wj * (y - nj) * pdf(y - nj) for wj, nj in zip(w, nu)), arb(0))  # d²/dy² of Σ w Φ(y−ν) is −Σ w (y−ν)φ
        dq = y * pdf(y)
        # g = Σ w Φ̄(y−ν) − e Φ̄(y): g'' = Σ w (y−ν)φ(y−ν) − e·y·φ(y); h = Φ(y) − e Σ w Φ(y−ν): h'' = −y φ(y) + e Σ w (y−ν) φ(y−ν)
        return dmix - e * dq if not self.add_orientation else -dq + e * dmix

    def _delta_arb(self, epsilon: arb) -> arb:
        eps = float(epsilon.mid())
        if float(self._nu.max()) == 0.0:
            return arb(0).max(1 - epsilon.exp())
        level = -eps if self.add_orientation else eps
        if level <= self._inf_loss():
            return arb(0).max(1 - epsilon.exp()) if self.add_orientation else 1 - epsilon.exp()
        y_hat = self._root(level)
        value = self._gain(arb(y_hat), epsilon, False)
        width = 4.0 * _ROOT_TOLERANCE * max(1.0, abs(y_hat))
        for _ in range(40):
            y1, y2 = arb(y_hat - width), arb(y_hat + width)
            if self._ell_arb(y1) < arb(level) and self._ell_arb(y2) > arb(level):
                ball = arb(y_hat, width)
                curvature = self._gain(ball, epsilon, True).abs_upper()
                slack = curvature * arb(width) ** 2 * 2  # ½·max|g''|·(2·width)²
                lower = value.lower()
                return arb(lower).union(value.upper() + slack)
            width *= 8.0
        # no verified bracket: the value over a wide ball of y still encloses max g
        return self._gain(arb(y_hat, 1.0), epsilon, False).union(value)  # pragma: no cover

    def _renyi_arb(self, alpha: arb) -> arb:
        raise NotApplicable("GaussianMixture has no closed-form Rényi divergence here")

    def _moment_arb(self, a: arb) -> arb:
        raise NotApplicable("GaussianMixture has no closed-form moments here")

    # ---- loss law (floating point; the PLD construction only places its grid with it) ------------

    def _loss_cdf(self, x: npt.NDArray[np.float64], under: Measure, inclusive: bool) -> npt.NDArray[np.float64]:
        x = np.asarray(x, dtype=float)
        if not self.add_orientation:
            return self._cdf_y(self._y_of_loss(x), under is Measure.P)
        # ℓ_add = −ℓ(y) <= x  ⟺  y >= ℓ^{-1}(−x); the add pair's P is the original Q
        return 1.0 - self._cdf_y(self._y_of_loss(-x), under is Measure.Q)

    def _loss_sf(self, x: npt.NDArray[np.float64], under: Measure, inclusive: bool) -> npt.NDArray[np.float64]:
        return 1.0 - self._loss_cdf(x, under, not inclusive)

    def _loss_quantile(self, q: npt.NDArray[np.float64], under: Measure) -> npt.NDArray[np.float64]:
        q = np.asarray(q, dtype=float)
        if not self.add_orientation:
            y = self._quantile_y(q, under is Measure.P)
            return np.where(np.isfinite(y), self._ell(np.where(np.isfinite(y), y, 0.0)), np.where(y > 0, np.inf, self._inf_loss()))
        y = self._quantile_y(1.0 - q, under is Measure.Q)
        return np.where(np.isfinite(y), -self._ell(np.where(np.isfinite(y), y, 0.0)), np.where(y > 0, -np.inf, -self._inf_loss()))

    def _sample_loss(self, size: int, rng: np.random.Generator, under: Measure) -> npt.NDArray[np.float64]:
        original_p = (under is Measure.P) != self.add_orientation
        y = rng.standard_normal(size)
        if original_p:
            y = y + self._nu[rng.choice(len(self.means), size=size, p=self._weights / self._weights.sum())]
        return -self._ell(y) if self.add_orientation else self._ell(y)


@dataclass(frozen=True)
class WeightedGaussianMixture(GaussianMixture):
    """(Σ_j w_j N(c_j, σ²), N(0, σ²)) with the given ``weights`` taken as exact (the convention of
    :class:`~verifier.pairs.DiscretePair`: the pair *is* the one with those binary64 masses), for
    dp_accounting's MixtureOfGaussiansDpEvent (the MMCC per-step pair, Choquette-Choo et al. 2024,
    arXiv 2310.15526). ``tails`` is derived (for validation); every computation uses the weights."""

    weights: tuple = ()

    def __post_init__(self) -> None:
        w = check_real_array("weights", self.weights)
        if w.shape != np.shape(self.means) or np.any(w <= 0):
            raise InvalidArgument("weights", list(np.ravel(w)), "must be positive, one per mean")
        object.__setattr__(self, "tails", tuple([1.0] + [min(1.0, math.fsum(w[j:].tolist())) for j in range(1, w.size)]))
        super().__post_init__()
        object.__setattr__(self, "weights", tuple(float(x) for x in w))

    def swapped(self) -> "WeightedGaussianMixture":
        return WeightedGaussianMixture(self.sigma, self.means, self.tails, not self.add_orientation, self.weights)

    @property
    def _weights(self) -> npt.NDArray[np.float64]:
        return np.array(self.weights)

    def _weights_arb(self) -> list[arb]:
        return [arb(x) for x in self.weights]


def mixture_of_gaussians(sigma: float, sensitivities: list, probabilities: list) -> WeightedGaussianMixture:
    """The pair (Σ_i p_i N(c_i, σ²), N(0, σ²)) of dp_accounting's MixtureOfGaussiansDpEvent, given in
    any order: components with p_i = 0 are dropped and equal c_i merged (their p_i summed exactly
    when the sum is a binary64 number; it is then the same pair)."""
    c = check_real_array("sensitivities", sensitivities)
    p = check_real_array("probabilities", probabilities)
    if c.ndim != 1 or c.size == 0 or c.shape != p.shape:
        raise InvalidArgument("probabilities", list(np.ravel(p)), f"must be a non-empty list as long as sensitivities ({c.size})")
    if np.any(c < 0):
        raise InvalidArgument("sensitivities", list(c), "must be >= 0 (norms of the shift)")
    if np.any(p < 0) or abs(math.fsum(p.tolist()) - 1.0) > 1e-9:
        raise InvalidArgument("probabilities", list(p), "must be >= 0 and sum to 1 (within 1e-9)")
    merged: dict[float, list[float]] = {}
    for ci, pi in zip(c.tolist(), p.tolist()):
        if pi > 0:
            merged.setdefault(ci, []).append(pi)
    means = sorted(merged)
    return WeightedGaussianMixture(sigma, tuple(means), (), False, tuple(math.fsum(merged[m]) for m in means))
