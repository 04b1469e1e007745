"""Rényi divergences of shuffled check-in (Liew, Hasegawa & Takahashi, "Privacy amplification via
shuffled check-ins"): rigorous UPPER bounds (Thm 2 / Eq. (5) with Wang–Balle–Kasiviswanathan
moments, Thm 4 with its k = 0 term restored) and the exact divergence of one specific pair of
datasets (a LOWER bound; notes §4.4 and §7 item 26). Integer orders; replace-one neighbours.

Eq. (5) (Thm 2) is an identity when each per-k moment is exact: the number k of check-ins is
observed and has the same Binomial(n, γ) law w_k under both datasets, so

    e^{(λ−1) R(λ)} = Σ_{k=0}^{n} w_k E_k(λ),   E_k(λ) = E_{q_k}[(p_k/q_k)^λ],  E_0 = 1,

and any upper (lower) bounds on the E_k give an upper (lower) bound on R(λ).

UPPER per-k moments. Given k, the release is k of the n records drawn without replacement (rate
q = k/n), each reported through the step, then shuffled or summed. Wang, Balle & Kasiviswanathan
2019, Thm 9 (subsampling without replacement, replace-one neighbours, integer λ >= 2), for a base
mechanism that is (j, ε(j))-RDP and with ε(∞) = ∞:

    E_k(λ) <= 1 + q² binom(λ,2) min{4(e^{ε(2)} − 1), 2e^{ε(2)}} + Σ_{j=3}^{λ} 2 q^j binom(λ,j) e^{(j−1) ε(j)},

and E_k(λ) <= e^{(λ−1) ε(λ)} (subsampling never hurts: the output is a post-processing of the
base mechanism run on a dataset that contains the changed record or not). verifier takes the
smaller. Base RDP ε(j) of the k-report release:

- ``aggregation="sum"`` (the paper's distributed check-in, §5): the sum of k reports with Gaussian
  noise N(0, σ²) each is the Gaussian mechanism with noise N(0, kσ²), ε(j) = jΔ²/(2kσ²) with Δ the
  replace-one sensitivity (the pair's). With the WBK term only and k = 0 restored this is the
  paper's Thm 4 (which prints the sum from k = 1: notes errata item 10; that printed form is in
  :mod:`verifier.rdp.checkin_published`).
- ``aggregation="shuffle"``: the shuffled k reports are a post-processing of the k reports, whose
  replace-one divergence is that of one report: ε(j) = max over both orders of D_j of the pair.

LOWER per-k moments (the specific pair: the changed user's report from P, every other report from Q;
for additive noise with records of norm <= Δ/2 this is the records ±Δ/2 with all others at −Δ/2):
given k the changed user is among the k w.p. q, so the likelihood ratio is (1 − q) + q·r̄ and

    E_k(λ) = Σ_{j=0}^{λ} binom(λ,j) (1−q)^{λ−j} q^j S_{k,j},

- shuffle: S_{k,j} = E[(mean of k ratios)^j] = e^{(j−1)·G(k, j)} with G the shuffle divergence of
  Eq. (8) (:mod:`verifier.rdp.shuffle`), exact (notes §4.4 [DERIVED], §7 item 26);
- sum (Gaussian): the release is (1−q)N(0, kσ²) + qN(Δ, kσ²) against N(0, kσ²), S_{k,j} = e^{j(j−1)Δ²/(2kσ²)}.

Dropping k terms only lowers a lower bound (terms with ln w_k below the largest by more than
:data:`LOWER_WEIGHT_SPAN` are skipped). The sums are evaluated in float64 log space (log-sum-exp)
and moved toward the safe side by :data:`FLOAT_MARGIN` relative to the largest magnitude involved,
far above the accumulated rounding error (~1e-14 relative); the tests hold them to mpmath.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np
import numpy.typing as npt

from verifier._types import Direction, Side
from verifier._validation import check_integer, check_unit
from verifier.errors import InvalidArgument, NotApplicable
from verifier.pairs import DominatingPair, Gaussian
from verifier.rdp.curve import RdpCurve, check_orders
from verifier.rdp.moments import renyi_upper
from verifier.rdp.shuffle import shuffle_lower

__all__ = [
    "binomial_log_weights",
    "wbk_mixture_upper",
    "wbk_log_moment",
    "checkin_upper",
    "theorem4_upper",
    "checkin_lower",
    "checkin_curve",
    "CITATION_UPPER",
    "CITATION_THEOREM4",
    "CITATION_LOWER",
]

CITATION_UPPER = (
    "Liew et al. Thm 2 / Eq. (5) (exact mixture over the observed k) with per-k min(Wang-Balle-Kasiviswanathan 2019 "
    "Thm 9, unsubsampled RDP): UPPER"
)
CITATION_THEOREM4 = "Liew et al. Thm 4 with the k = 0 term restored (Eq. (5) + WBK 2019 Thm 9, Gaussian sum): UPPER"
CITATION_LOWER = "Liew et al. Eq. (5) with the exact per-k moments of one specific pair (notes 4.4, 7 item 26): LOWER"

#: Relative margin (of the largest log-magnitude in a sum) by which float64 log-sum-exp results are
#: moved toward the safe side.
FLOAT_MARGIN = 1e-12
#: Lower bounds skip the k with ln w_k < max ln w − LOWER_WEIGHT_SPAN (dropping terms only lowers them).
LOWER_WEIGHT_SPAN = 60.0
#: Rows of k processed at once (memory of the k × j matrices).
_CHUNK = 2048
#: Largest number of users accepted (the upper bound sums every k).
MAX_USERS = 10**6


def binomial_log_weights(users: int, rate: float) -> npt.NDArray[np.float64]:
    """ln w_k = ln [binom(n,k) γ^k (1−γ)^{n−k}] for k = 0 … n (−∞ where the weight is 0)."""
    from scipy.special import gammaln

    n = check_integer("users", users, minimum=1, maximum=MAX_USERS)
    gamma = check_unit("rate", rate)
    k = np.arange(n + 1, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_g = math.log(gamma) if gamma > 0 else -math.inf
        log_1g = math.log1p(-gamma) if gamma < 1 else -math.inf
        out = gammaln(n + 1) - gammaln(k + 1) - gammaln(n - k + 1)
        out = out + np.where(k > 0, k * log_g, 0.0) + np.where(n - k > 0, (n - k) * log_1g, 0.0)
    return out


def _log_binomials(lam: int) -> npt.NDArray[np.float64]:
    from scipy.special import gammaln

    j = np.arange(lam + 1, dtype=float)
    return gammaln(lam + 1) - gammaln(j + 1) - gammaln(lam - j + 1)


#: Terms more than this far (in log) below the largest contribute less than e^-50 relative: their
#: rounding errors are not counted in the margin.
_SIGNIFICANT = 50.0


def _logsumexp(rows: npt.NDArray[np.float64]) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Row-wise log Σ exp, and the row-wise largest |term| among the significant ones (within
    :data:`_SIGNIFICANT` of the row's largest; the scale of the rounding margin)."""
    top = np.max(rows, axis=1)
    safe = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore", under="ignore", invalid="ignore"):
        value = safe + np.log(np.sum(np.exp(rows - safe[:, None]), axis=1))
        significant = rows >= (safe - _SIGNIFICANT)[:, None]
    value = np.where(top == math.inf, math.inf, np.where(np.isfinite(top), value, -math.inf))  # an infinite term is +∞
    scale = np.max(np.where(significant & np.isfinite(rows), np.abs(rows), 0.0), axis=1)
    return value, scale


# ---- base RDP of the k-report release ---------------------------------------------------------------

#: (pair, k array, j array) → (j−1)·ε_k(j) as a len(k) × len(j) matrix.
BaseLogMoments = Callable[[DominatingPair, npt.NDArray[np.float64], npt.NDArray[np.float64]], npt.NDArray[np.float64]]


def _gaussian_sum_base(pair: DominatingPair, k: npt.NDArray[np.float64], j: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    if not isinstance(pair, Gaussian):
        raise NotApplicable(f"sum aggregation is analysed for the Gaussian pair only, not {pair!r}")
    rho = pair.sensitivity**2 / (2.0 * pair.sigma**2)
    return (j * (j - 1))[None, :] * rho / k[:, None]


def _shuffle_base(pair: DominatingPair, k: npt.NDArray[np.float64], j: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    per_j = np.array(
        [(jj - 1) * max(renyi_upper(pair, float(jj), d) for d in Direction) if jj >= 2 else 0.0 for jj in j]
    )
    return np.broadcast_to(per_j[None, :], (len(k), len(j)))


BASES: dict[str, BaseLogMoments] = {"sum": _gaussian_sum_base, "shuffle": _shuffle_base}


def wbk_log_moment(
    base: npt.NDArray[np.float64], log_q: npt.NDArray[np.float64], lam: int, *, second_order_min: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """ln of WBK Thm 9's bound on E[(M/M')^λ] per row (module docstring; ε(∞) = ∞ form), and the
    row's rounding scale (:func:`_logsumexp`); ``base[:, j]`` = (j−1)ε(j), j = 0 … λ; ``log_q`` per row.
    ``second_order_min=False`` keeps only 4(e^{ε(2)} − 1) in the j = 2 term (Liew et al.'s Approach 1
    as printed; larger, so still an upper bound)."""
    log_binom = _log_binomials(lam)
    j = np.arange(lam + 1)
    terms = np.full((len(log_q), lam + 2), -math.inf)
    terms[:, 0] = 0.0
    eps2 = base[:, 2]
    with np.errstate(over="ignore"):
        second = math.log(4.0) + np.log(np.expm1(eps2))
        if second_order_min:
            second = np.minimum(second, math.log(2.0) + eps2)
    terms[:, 1] = 2 * log_q + log_binom[2] + second
    if lam >= 3:
        terms[:, 2 : lam] = math.log(2.0) + j[None, 3:] * log_q[:, None] + log_binom[None, 3:] + base[:, 3:]
    return _logsumexp(terms)


def _upper_log_moments(
    pair: DominatingPair, users: int, aggregation: str, lam: int, k: npt.NDArray[np.float64], cap: bool
) -> tuple[np.ndarray, np.ndarray]:
    j = np.arange(lam + 1, dtype=float)
    base = BASES[aggregation](pair, k, j)
    log_q = np.log(k / users)
    wbk, scale = wbk_log_moment(base, log_q, lam)
    if not cap:
        return wbk, scale
    return np.minimum(wbk, base[:, lam]), scale


def wbk_mixture_upper(
    pair: DominatingPair, users: int, rate: float, aggregation: str, orders: npt.ArrayLike, cap: bool, with_k0: bool = True
) -> npt.NDArray[np.float64]:
    """(1/(λ−1)) ln Σ_k w_k E_k(λ) with the WBK per-k bound (capped by the base RDP when ``cap``),
    rounded up; ``with_k0=False`` drops the k = 0 term (only for reproducing the printed Thm 4)."""
    log_w = binomial_log_weights(users, rate)
    ints = _integer_orders(orders)
    out = np.empty(len(ints))
    ks = np.arange(1, users + 1)
    for i, lam in enumerate(ints):
        rows = [np.array([log_w[0] if with_k0 else -math.inf])]
        scales = [np.array([abs(log_w[0]) if math.isfinite(log_w[0]) else 0.0])]
        for start in range(0, users, _CHUNK):
            k = ks[start : start + _CHUNK]
            log_e, scale = _upper_log_moments(pair, users, aggregation, int(lam), k.astype(float), cap)
            rows.append(log_w[k] + log_e)
            scales.append(np.abs(log_w[k]) + scale)
        terms, term_scales = np.concatenate(rows), np.concatenate(scales)
        total, _ = _logsumexp(terms[None, :])
        significant = terms >= total[0] - _SIGNIFICANT
        margin = FLOAT_MARGIN * (float(np.max(term_scales[significant], initial=0.0)) + abs(float(total[0])) + 1.0)
        out[i] = (float(total[0]) + margin) / (lam - 1)
    return out


def _integer_orders(orders: npt.ArrayLike) -> npt.NDArray[np.int64]:
    arr = np.asarray(orders, dtype=float)
    if arr.size == 0 or np.any(arr != np.floor(arr)) or np.any(arr < 2):
        raise InvalidArgument("orders", list(arr), "the check-in bounds are evaluated at integer orders >= 2")
    return arr.astype(np.int64)


def checkin_upper(pair: DominatingPair, users: int, rate: float, orders: npt.ArrayLike, aggregation: str) -> npt.NDArray[np.float64]:
    """UPPER bounds on one round's RDP of shuffled check-in at integer orders: Eq. (5) with per-k
    min(WBK Thm 9, unsubsampled base RDP) (module docstring)."""
    return wbk_mixture_upper(pair, users, rate, aggregation, orders, cap=True)


def theorem4_upper(pair: Gaussian, users: int, rate: float, orders: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """Liew et al. Thm 4 (distributed check-in, Gaussian sum) with the k = 0 term restored: an UPPER
    bound on one round's RDP at integer orders (pair = Gaussian(σ, Δ) with Δ the replace-one
    sensitivity; the paper's constants are Δ = 2)."""
    return wbk_mixture_upper(pair, users, rate, "sum", orders, cap=False)


def _lower_log_moments(pair: DominatingPair, users: int, aggregation: str, lam: int, k: int, log_s: npt.NDArray[np.float64]) -> float:
    q = k / users
    j = np.arange(lam + 1, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_1q = math.log1p(-q) if q < 1 else -math.inf
        terms = _log_binomials(lam) + np.where(lam - j > 0, (lam - j) * log_1q, 0.0) + j * math.log(q) + log_s[: lam + 1]
    value, scale = _logsumexp(terms[None, :])
    return float(value[0]) - FLOAT_MARGIN * (float(scale[0]) + 1.0)


def _log_s(pair: DominatingPair, k: int, lam_max: int, aggregation: str) -> npt.NDArray[np.float64]:
    """ln S_{k,j} for j = 0 … λ_max, rounded down (module docstring)."""
    j = np.arange(lam_max + 1, dtype=float)
    if aggregation == "sum":
        if not isinstance(pair, Gaussian):
            raise NotApplicable(f"sum aggregation is analysed for the Gaussian pair only, not {pair!r}")
        rho = pair.sensitivity**2 / (2.0 * pair.sigma**2)
        return np.maximum(j * (j - 1) * rho / k * (1 - FLOAT_MARGIN), 0.0)
    out = np.zeros(lam_max + 1)
    if lam_max >= 2:
        out[2:] = (j[2:] - 1) * shuffle_lower(pair, k, np.arange(2, lam_max + 1)) * (1 - FLOAT_MARGIN)
    return out


def checkin_lower(pair: DominatingPair, users: int, rate: float, orders: npt.ArrayLike, aggregation: str) -> npt.NDArray[np.float64]:
    """LOWER bounds on one round's RDP of shuffled check-in at integer orders: the exact divergence
    of the specific pair (module docstring), k terms far below the bulk dropped."""
    ints = _integer_orders(orders)
    log_w = binomial_log_weights(users, rate)
    keep = np.flatnonzero(log_w >= np.max(log_w) - LOWER_WEIGHT_SPAN)
    lam_max = int(ints.max())
    per_k = {int(k): _log_s(pair, int(k), lam_max, aggregation) for k in keep if k > 0}
    out = np.empty(len(ints))
    for i, lam in enumerate(ints):
        terms = [float(log_w[k]) + (0.0 if k == 0 else _lower_log_moments(pair, users, aggregation, int(lam), int(k), per_k[int(k)])) for k in keep]
        total, _ = _logsumexp(np.array([terms]))
        out[i] = max(0.0, float(total[0]) / (lam - 1))
    return out


def checkin_curve(
    pair: DominatingPair, users: int, rate: float, rounds: int, aggregation: str, orders: npt.ArrayLike, direction: Direction, side: Side
) -> RdpCurve:
    """RDP curve of ``rounds`` rounds of shuffled check-in on ``side`` (either direction of the
    replace-one relation). A fractional order α takes the value at ⌈α⌉ (UPPER) or ⌊α⌋ (LOWER; 0
    below 2), Rényi divergences being non-decreasing in the order. No value is flagged exact."""
    if not isinstance(direction, Direction):
        raise InvalidArgument("direction", direction, "must be Direction.ADD or Direction.REMOVE")
    grid = check_orders(orders)
    rounded = np.ceil(grid) if side is Side.UPPER else np.floor(grid)
    usable = rounded >= 2
    values = np.zeros(len(grid))
    if np.any(usable):
        ints = np.unique(rounded[usable])
        compute = checkin_upper if side is Side.UPPER else checkin_lower
        at_int = dict(zip(ints, compute(pair, users, rate, ints, aggregation)))
        values[usable] = [at_int[a] for a in rounded[usable]]
    citation = CITATION_UPPER if side is Side.UPPER else CITATION_LOWER
    # never exact: the LOWER values drop k terms and sit FLOAT_MARGIN below the specific pair's
    # divergence (up to 9e-6 relative at n = 1000, γ = 0.01: issue 30), not within EXACT_RTOL
    return RdpCurve(grid, values, np.zeros(len(grid), dtype=bool), direction, citation, side).times(rounds)
