"""Rényi divergences of the matrix-mechanism dominating pair (Schuchardt & Kalinin, §3), UPPER
bounds at integer orders, both directions. Every function takes the scaled Gram matrix
Γ = Δ²·G/σ² (only G/σ² enters, notes §5 R3/R9).

REMOVE, R_α(P‖Q), Lemma 3.2 / Algorithm 1 (Lemma 3.3) with the corrections of notes §3.1:

    R_α = [log S_α + log α! − α log b]/(α − 1) + α·τ/2,

where S_α is the multinomial sum of the kernel :mod:`verifier._fast.matrix_dp` over the truncated
Γ^(p) and τ = max_{cyc(i,j) >= p} Γ_ij (:func:`verifier.matrix.gram.truncate`). EXACT (up to
rounding, rounded up) when τ = 0 and b >= 3p − 3; an UPPER bound otherwise (the τ term, Lemma 3.3;
the double-counting glue for b < 3p − 3, notes §2.4). For p = 1 Γ^(1) is diagonal and
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

from verifier._directed import arb_bound, up, with_precision
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


def _check_gamma(gamma: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    g = np.ascontiguousarray(gamma, dtype=float)
    if g.ndim != 2 or g.shape[0] != g.shape[1] or not np.all(np.isfinite(g)) or np.any(g < 0):
        raise InvalidArgument("gram", f"shape {g.shape}", "must be a square, finite, entrywise non-negative matrix")
    return g


def dp_log_sums(h: npt.NDArray[np.float64], bands: int, amax: int) -> tuple[npt.NDArray[np.float64], float]:
    """(log S_m for m = 0..amax, absolute error allowance) of Algorithm 1 on the truncated Γ^(p).

    The allowance: every log-sum-exp and addition is 1-Lipschitz in the sup norm and adds at most
    a few units of roundoff times (|value| + 1); the longest chain of dependent operations is
    b·(amax + 3) transitions plus the final sums over the states and prefixes."""
    # imported here so that `import verifier` works in a checkout whose kernels predate this one
    from verifier._fast.matrix_dp import matrix_log_sums

    h = _check_gamma(h)
    b = h.shape[0]
    p = check_integer("bands", bands, minimum=1, maximum=min(b, 64))
    amax = check_integer("amax", amax, minimum=0)
    band = np.zeros((b, p))
    rows = np.arange(b)
    for d in range(p):
        band[d:, d] = h[rows[d:], rows[d:] - d]
    glue = np.ascontiguousarray(np.array([[h[i, b - 1 - j] for j in range(p - 1)] for i in range(p - 1)]).reshape(p - 1, p - 1))
    lfact = np.array([math.lgamma(t + 1) for t in range(amax + 1)])
    size = (amax + 1) ** p
    out = np.empty(amax + 1)
    info = np.zeros(1)
    code = matrix_log_sums(band, glue, lfact, amax, out, info, np.empty(size), np.empty(size))
    if code != 0:
        raise NumericalFailure(f"matrix_log_sums rejected its input (code {code})")  # pragma: no cover
    depth = b * (amax + 3) + size + (amax + 1) ** (p - 1) + p * p
    return out, 8.0 * _UNIT * (float(info[0]) + 1.0) * depth


def _diagonal_log_sums(diag: npt.NDArray[np.float64], amax: int) -> npt.NDArray[np.float64]:
    """UPPER bounds on log(S_m/b^m), m = 0..amax, for a diagonal Γ^(1): the product of the series
    Σ_t e^{h t(t−1)/2} x^t/(t!·b^t) (one power per distinct h), rounded up with the kernels' error
    bounds. (The 1/b^t inside keeps every log O(1): no cancellation against α log b later.)"""
    from verifier.rdp.series import log_power  # the RDP package imports this module (its MatrixMechanism curve)

    n = amax + 1
    total: npt.NDArray[np.float64] | None = None
    values, counts = np.unique(diag, return_counts=True)
    with with_precision():
        log_b = arb(len(diag)).log()
        for h, c in zip(values, counts):
            log_ta = np.zeros(n)
            for t in range(1, n):
                log_ta[t] = arb_bound(
                    arb(int(c)).log() + arb(float(h)) * (t * (t - 1) // 2) - arb(t + 1).lgamma() - t * log_b, Side.UPPER
                )
            coeff, err = log_power(log_ta, int(c), n)  # [x^m] A(x)^c, A(x) = Σ_t e^{h t(t−1)/2} x^t/t!
            upper = coeff + err
            total = upper if total is None else _upper_product(total, upper, n)
    if total is None:
        raise InvalidArgument("gram", "0×0", "must have at least one batch")
    return total


def _upper_product(a: npt.NDArray[np.float64], b: npt.NDArray[np.float64], n: int) -> npt.NDArray[np.float64]:
    from verifier.rdp.series import log_product

    coeff, err = log_product(a, b, n)
    return coeff + err


@lru_cache(maxsize=1024)
def _log_factorial_upper(a: int) -> float:
    with with_precision():
        return arb_bound(arb(a + 1).lgamma(), Side.UPPER)


@lru_cache(maxsize=4096)
def _a_log_b_lower(a: int, b: int) -> float:
    with with_precision():
        return arb_bound(a * arb(b).log(), Side.LOWER)


def remove_values(gamma: npt.ArrayLike, bands: int, orders: npt.ArrayLike) -> tuple[npt.NDArray[np.float64], bool]:
    """(UPPER bounds on R_α(P‖Q) at the integer ``orders`` >= 2, exact) by Algorithm 1 with bandwidth
    ``bands`` (the p = 1 shortcut for bands = 1); ``exact`` is τ = 0 and b >= 3p − 3."""
    g = _check_gamma(np.asarray(gamma, dtype=float))
    b = g.shape[0]
    ints = np.asarray(orders, dtype=np.int64)
    if ints.size == 0 or np.any(ints < 2):
        raise InvalidArgument("orders", list(ints), "must be integers >= 2")
    p = check_integer("bands", bands, minimum=1, maximum=b)
    amax = int(ints.max())
    h, tau = truncate(g, p)
    if p == 1:
        log_s = _diagonal_log_sums(np.diagonal(h).copy(), amax)  # already divided by b^m
        allowance, scaled = 0.0, True
    else:
        log_s, allowance = dp_log_sums(h, p, amax)
        scaled = False
    # [log S_α + log α! − α log b]/(α − 1) + ατ/2 in floating point, then raised by a bound on its
    # rounding error (a few units of roundoff per operation on the magnitudes involved)
    a = ints.astype(float)
    terms = (log_s[ints] + allowance, np.array([_log_factorial_upper(int(x)) for x in ints]), np.array([0.0 if scaled else _a_log_b_lower(int(x), b) for x in ints]))
    raw = (terms[0] + terms[1] - terms[2]) / (a - 1) + a * tau / 2
    magnitude = (np.abs(terms[0]) + terms[1] + terms[2]) / (a - 1) + a * tau / 2
    values = np.maximum(0.0, up(raw + 8 * _UNIT * (magnitude + 1.0)))
    return values, tau == 0.0 and b >= 3 * p - 3


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
