"""Rényi divergences of the matrix-mechanism dominating pair (Schuchardt & Kalinin, §3), UPPER
bounds at integer orders, both directions. Every function takes the scaled Gram matrix
Γ = Δ²·G/σ² (only G/σ² enters, notes §5 R3/R9).

REMOVE, R_α(P‖Q), Lemma 3.2 / Algorithm 1 (Lemma 3.3) with the corrections of notes §3.1:

    R_α = [log S_α + log α! − α log b]/(α − 1) + α·τ/2,

where S_α is the multinomial sum of the kernel :mod:`verifier._fast.matrix_dp` over the truncated
Γ^(p) and τ = max_{cyc(i,j) >= p} Γ_ij (:func:`verifier.matrix.gram.truncate`). An equality when
τ = 0 and b >= 3p − 3, an UPPER bound otherwise (the τ term, Lemma 3.3; the double-counting glue
for b < 3p − 3, notes §2.4); every value is rounded up by its own order's rounding allowance and
flagged exact only where it is an equality and that order's bracket is within EXACT_RTOL (issue 30). For p = 1 Γ^(1) is diagonal and
S_α = [x^α] Π_j Σ_t e^{Γ^(1)_jj t(t−1)/2} x^t/t!, computed by the rigorous power-series kernel
(:mod:`verifier.rdp.series`; equal diagonal entries share one power), the polynomial shortcut.

The DP costs about b·α^{2p−1}/(p−1)!; :func:`remove_table` therefore runs every bandwidth
q = 1…min(p_G, 8) (p_G the cyclic bandwidth of G) up to the largest order its cost budget allows and
keeps, order by order, the smallest value (each is a rigorous upper bound); orders no run reached
are +∞ (the trivial bound).

ADD, R_α(Q‖P), Lemma 3.4 (Algorithm 2), an UPPER bound for every real α > 1:

    R_α <= tr(Γ)/(2b) + (α − 1)·1ᵀΓ1/(2b²).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import numpy.typing as npt
from flint import arb

from verifier._directed import EXACT_RTOL, arb_bound, down, up, with_precision
from verifier._types import Side
from verifier._validation import check_integer
from verifier.errors import InvalidArgument, NumericalFailure
from verifier.matrix.gram import cyclic_bandwidth, truncate

__all__ = [
    "CITATION_REMOVE",
    "CITATION_ADD",
    "MAX_BANDS",
    "RemoveTable",
    "dp_log_sums",
    "remove_values",
    "remove_table",
    "add_values",
    "order_cap",
]

CITATION_REMOVE = "Schuchardt & Kalinin, Lemma 3.2 / Algorithm 1 (Lemma 3.3), corrected as in notes 3.1"
CITATION_ADD = "Schuchardt & Kalinin, Lemma 3.4 / Algorithm 2 (add direction, upper bound)"

#: Largest bandwidth the DP is run with (the state space grows like α^{2p−1}).
MAX_BANDS = 8
#: Default work budget per bandwidth (kernel state visits; about a second on one core).
DEFAULT_BUDGET = 4.0e8
#: Largest order computed.
MAX_ORDER = 256
_UNIT = 2.0**-52
_HALF_UNIT = 2.0**-53


def order_cap(batches: int, bands: int, budget: float = DEFAULT_BUDGET) -> int:
    """Largest order amax <= 256 whose DP work b·#prefixes·(amax+1)^p·(amax+1)/2 (states visited
    times transitions) fits ``budget`` (0 if none); p = 1 uses the polynomial shortcut (no cap)."""
    best = 0
    for amax in range(2, MAX_ORDER + 1):
        a = amax + 1
        work = batches * math.comb(amax + bands - 1, bands - 1) * float(a) ** bands * a / 2
        if bands == 1 or work <= budget:
            best = amax
        else:
            break
    return best


@lru_cache(maxsize=64)
def _log_factorials(amax: int) -> npt.NDArray[np.float64]:
    """log t! for t = 0..amax, correctly rounded (ball arithmetic), read-only."""
    with with_precision():
        out = np.array([float(arb(t + 1).lgamma().mid()) for t in range(amax + 1)])
    out.setflags(write=False)
    return out


def _check_gamma(gamma: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    g = np.ascontiguousarray(gamma, dtype=float)
    if g.ndim != 2 or g.shape[0] != g.shape[1] or not np.all(np.isfinite(g)) or np.any(g < 0):
        raise InvalidArgument("gram", f"shape {g.shape}", "must be a square, finite, entrywise non-negative matrix")
    return g


def dp_log_sums(h: npt.NDArray[np.float64], bands: int, amax: int) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """(log S_m, absolute error allowance of log S_m), m = 0..amax, of Algorithm 1 on the truncated
    Γ^(p): one allowance per order, so a low order never carries the longest chain's allowance
    (issue 30: order 3 of a table run to order 64 sat 2.8e-7 above the truth).

    The allowance of log S_m (u = 2^−53; glibc's exp and log1p are within one ulp). Every value
    feeding out[m] has partial count <= m, so only those states matter. Let M_m be the largest
    |value| (summand or partial log-sum-exp) the kernel met at partial counts <= m (it reports them
    per count) and C_m = h_max·m²/2 + log m!: every partial sum inside a transition weight
    h_kk·t(t−1)/2 + t·Σ_u h_k,k−L+u·r_u − log t!, a prefix weight or a glue term at counts <= m is
    at most C_m in magnitude (the counts involved total at most m; log-factorials are superadditive).
    - A log-sum-exp r = fl(x + log1p(exp(y − x))), x >= y, is within u·(|r| + 4) <= u·(M_m + 4)
      of the exact one: the error u·|y − x| of the difference moves exp by at most
      e^{y−x}·u·|y − x| <= u/e, exp and log1p add one ulp each (<= 2u and 1.4u), the final
      addition u·|r|.
    - Each addition or product inside a weight is within u·C_m of its exact result, each log t!
      input (rounded to within one ulp here) within 2u·C_m (counted as two operations); adding a
      weight to a state's value, within u·M_m.
    - Log-sum-exp is 1-Lipschitz in the sup norm, so errors add along a chain only: per position
      at most m + 1 predecessors are summed into a state and the transition weight costs 2p + 6
      operations; the prefix and glue weights cost at most 5p²; the final sums into out[m] run over
      at most C(m + p − 1, p − 1) suffixes of one prefix, then over as many prefixes (the kernel
      sums each prefix apart): N_m = 2·C(m + p − 1, p − 1) steps.
    Hence |computed − exact| <= u·[(b(m + 1) + N_m)(M_m + 4) + (b + 1)·M_m + (b(2p + 6) + 5p²)·C_m]."""
    # imported here so that `import verifier` works in a checkout whose kernels predate this one
    from verifier._fast.matrix_dp import matrix_log_sums

    h = _check_gamma(h)
    b = h.shape[0]
    p = check_integer("bands", bands, minimum=1, maximum=min(b, 64))
    amax = check_integer("amax", amax, minimum=0, maximum=511)
    band = np.zeros((b, p))
    rows = np.arange(b)
    for d in range(p):
        band[d:, d] = h[rows[d:], rows[d:] - d]
    glue = np.ascontiguousarray(np.array([[h[i, b - 1 - j] for j in range(p - 1)] for i in range(p - 1)]).reshape(p - 1, p - 1))
    lfact = _log_factorials(amax)
    size = (amax + 1) ** p
    out = np.empty(amax + 1)
    info = np.zeros(amax + 1)
    code = matrix_log_sums(band, glue, lfact, amax, out, info, np.empty(size), np.empty(size))
    if code != 0:
        raise NumericalFailure(f"matrix_log_sums rejected its input (code {code})")  # pragma: no cover
    m = np.arange(amax + 1, dtype=float)
    big = np.maximum.accumulate(info)
    inner = float(np.max(h)) * m * m / 2 + lfact
    finals = np.array([2.0 * math.comb(k + p - 1, p - 1) for k in range(amax + 1)])
    allowance = _HALF_UNIT * ((b * (m + 1) + finals) * (big + 4.0) + (b + 1) * big + (b * (2 * p + 6) + 5 * p * p) * inner)
    return out, up(allowance * (1 + 16 * _UNIT))  # the float evaluation of the bound, rounded up


def _diagonal_log_sums(diag: npt.NDArray[np.float64], amax: int, side: Side) -> npt.NDArray[np.float64]:
    """Bounds on ``side`` of log(S_m/b^m), m = 0..amax, for a diagonal Γ^(1): the product of the
    series Σ_t e^{h t(t−1)/2} x^t/(t!·b^t) (one power per distinct h), rounded toward ``side`` with
    the kernels' per-coefficient error bounds. (The 1/b^t inside keeps every log O(1): no
    cancellation against α log b later.)"""
    from verifier.rdp.series import log_power, log_product  # the RDP package imports this module (its MatrixMechanism curve)

    sign = 1.0 if side is Side.UPPER else -1.0
    n = amax + 1
    total: npt.NDArray[np.float64] | None = None
    values, counts = np.unique(diag, return_counts=True)
    with with_precision():
        log_b = arb(len(diag)).log()
        for h, c in zip(values, counts):
            log_ta = np.zeros(n)
            for t in range(1, n):
                log_ta[t] = arb_bound(
                    arb(int(c)).log() + arb(float(h)) * (t * (t - 1) // 2) - arb(t + 1).lgamma() - t * log_b, side
                )
            coeff, err = log_power(log_ta, int(c), n)  # [x^m] A(x)^c, A(x) = Σ_t e^{h t(t−1)/2} x^t/t!
            bound = coeff + sign * err
            if total is not None:
                coeff, err = log_product(total, bound, n)
                bound = coeff + sign * err
            total = bound
    if total is None:
        raise InvalidArgument("gram", "0×0", "must have at least one batch")
    return total


@lru_cache(maxsize=1024)
def _log_factorial_upper(a: int) -> float:
    with with_precision():
        return arb_bound(arb(a + 1).lgamma(), Side.UPPER)


@lru_cache(maxsize=4096)
def _a_log_b_lower(a: int, b: int) -> float:
    with with_precision():
        return arb_bound(a * arb(b).log(), Side.LOWER)


def remove_values(gamma: npt.ArrayLike, bands: int, orders: npt.ArrayLike) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_]]:
    """(UPPER bounds on R_α(P‖Q) at the integer ``orders`` >= 2, exact flags) by Algorithm 1 with
    bandwidth ``bands`` (the p = 1 shortcut for bands = 1). A value is flagged exact when the
    formula is (τ = 0 and b >= 3p − 3) and its own rounding bracket (the order's allowance of
    :func:`dp_log_sums`, or the series' error bounds, both sides) is at most EXACT_RTOL wide,
    relative."""
    g = _check_gamma(np.asarray(gamma, dtype=float))
    b = g.shape[0]
    ints = np.asarray(orders, dtype=np.int64)
    if ints.size == 0 or np.any(ints < 2):
        raise InvalidArgument("orders", list(ints), "must be integers >= 2")
    p = check_integer("bands", bands, minimum=1, maximum=b)
    amax = int(ints.max())
    h, tau = truncate(g, p)
    if p == 1:
        diag = np.diagonal(h).copy()
        high = _diagonal_log_sums(diag, amax, Side.UPPER)[ints]  # already divided by b^m
        low = _diagonal_log_sums(diag, amax, Side.LOWER)[ints]
        log_b_terms = np.zeros(len(ints))
    else:
        log_s, allowance = dp_log_sums(h, p, amax)
        high, low = log_s[ints] + allowance[ints], log_s[ints] - allowance[ints]
        log_b_terms = np.array([_a_log_b_lower(int(x), b) for x in ints])
    # [log S_α + log α! − α log b]/(α − 1) + ατ/2 in floating point, then moved by a bound on its
    # rounding error (a few units of roundoff per operation on the magnitudes involved; the two
    # arb-rounded constants are within one ulp of the truth, inside that bound)
    a = ints.astype(float)
    lfact = np.array([_log_factorial_upper(int(x)) for x in ints])
    magnitude = (np.maximum(np.abs(high), np.abs(low)) + lfact + log_b_terms) / (a - 1) + a * tau / 2
    slack = 8 * _UNIT * (magnitude + 1.0)
    values = np.maximum(0.0, up((high + lfact - log_b_terms) / (a - 1) + a * tau / 2 + slack))
    lower = np.maximum(0.0, down((low + lfact - log_b_terms) / (a - 1) + a * tau / 2 - slack))
    exact = (tau == 0.0 and b >= 3 * p - 3) & np.isfinite(values) & (values - lower <= EXACT_RTOL * values)
    return values, exact


@dataclass(frozen=True)
class RemoveTable:
    """Remove-direction UPPER bounds at the integer orders 2…``len+1``: ``values`` (+∞ where no run
    reached the order), ``exact`` flags and the bandwidth ``bands`` that gave each value."""

    orders: npt.NDArray[np.int64]
    values: npt.NDArray[np.float64]
    exact: npt.NDArray[np.bool_]
    bands: npt.NDArray[np.int64]


def remove_table(gamma: npt.ArrayLike, max_order: int = MAX_ORDER, budget: float = DEFAULT_BUDGET) -> RemoveTable:
    """Best remove-direction bounds over the bandwidths 1…min(p_G, 8) (module docstring)."""
    g = _check_gamma(np.asarray(gamma, dtype=float))
    b = g.shape[0]
    top = check_integer("max_order", max_order, minimum=2, maximum=MAX_ORDER)
    orders = np.arange(2, top + 1, dtype=np.int64)
    values = np.full(len(orders), math.inf)
    exact = np.zeros(len(orders), dtype=bool)
    used = np.zeros(len(orders), dtype=np.int64)
    for p in range(1, min(cyclic_bandwidth(g), MAX_BANDS, b) + 1):
        cap = min(top, order_cap(b, p, budget))
        if cap < 2:
            break
        found, is_exact = remove_values(g, p, orders[: cap - 1])
        better = found < values[: cap - 1]
        values[: cap - 1] = np.where(better, found, values[: cap - 1])
        used[: cap - 1] = np.where(better, p, used[: cap - 1])
        # a smaller upper bound than an exact run's value lies in that run's bracket as well
        exact[: cap - 1] |= is_exact
    return RemoveTable(orders, values, exact, used)


def add_values(gamma: npt.ArrayLike, orders: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """UPPER bounds on R_α(Q‖P) at every real order α > 1 (Lemma 3.4; module docstring)."""
    g = _check_gamma(np.asarray(gamma, dtype=float))
    b = g.shape[0]
    grid = np.asarray(orders, dtype=float)
    with with_precision():
        # float sums of n non-negative terms are within n·u relatively of the truth (rounded up here)
        trace = arb(float(np.sum(np.diagonal(g)))) * (1 + arb(b) * _UNIT)
        total = arb(float(np.sum(g))) * (1 + arb(b * b) * _UNIT)
        return np.array([arb_bound(trace / (2 * b) + (arb(float(a)) - 1) * total / (2 * b * b), Side.UPPER) for a in grid])
