"""Conditional-composition (CC) accountant for matrix mechanisms under random allocation
(Schuchardt & Kalinin, §4, Algorithm 4 with the clarifications of notes §2.6–2.9 and §3.4).

Units of σ: μ_i = Δ·m_i/σ (b×N means, Lemma 2.8). For each step n and relation r:

1. sort the slots by the current mean μ_{i,n} (Corollary 4.4 needs 0 <= c_1 <= … <= c_b);
2. for each sorted position i >= 2, a high-probability lower bound τ_i on the ternary privacy loss
   L_i of the past (Lemma 4.5) from the variational bound L_i >= E_ψ[L_ij] − KL(ψ‖π) (Lemma 4.7):
   its law is Gaussian with mean ν and s.d. ξ (ADD: x ~ N(0, I), Thm 4.8 / Cor D.4, τ = ν + ξΦ⁻¹(β))
   or a b-component Gaussian mixture (REMOVE: x ~ (1/b) Σ_k N(μ_k, I) — the FULL mixture of
   Thm D.3, not Algorithm 4's k >= i sub-sum, which the stated proofs do not cover, notes §2.8);
   for REMOVE every ψ gives τ = min_k ν_k + ξΦ⁻¹(β) (each term of (1/b) Σ_k Φ((τ − ν_k)/ξ) is at most
   Φ((τ − min ν)/ξ)), and for the best ψ the exact condition is solved by bisection (low end kept);
   ψ ranges over the temperature family ψ_j ∝ exp(−‖μ_i − μ_j‖²/t), t ∈ {∞, 10^-1, 10^-0.5, 1,
   10^0.5, 10} (App. F, Options 1+3) and the Remark D.5 variant (ψ uniform on the components that
   differ from μ_i); the largest τ is kept. Where every earlier component equals μ_i, L_i ≡ 0 and
   τ_i = 0 (notes §2.7);
3. λ̄_i = 1/(1 + (i−1)e^{τ_i}) bounds the reverse hazard (Lemma 4.5) with λ̄_1 = 1, and
   p_i = λ̄_i Π_{j>i}(1 − λ̄_j) (Corollary 4.4, product index corrected);
4. the per-step pair is (Σ_i p_i N(c_i, 1), N(0, 1)) (REMOVE) or its swap (ADD) —
   :class:`verifier.pairs.mixture.GaussianMixture`. Equal means are merged, and the tail sums
   P(z >= j) are rounded UP to a geometric grid of ratio 1 + 2^-5 (a stochastically larger mixture
   dominates, Lemma 4.2; this also absorbs the floating-point error of steps 2–3, ~1e-12 relative),
   so that equal per-step pairs repeat and are self-composed once.

Every τ_i fails with probability at most β = δ_E/(N(b − 1)) (union bound over steps and positions,
Theorem 4.6 / Lemma 4.1), so δ(ε) <= δ_PLD(ε) + δ_E with δ_PLD from verifier's PLD engine
(dominating side, directed rounding). The paper's "hybrid" per-epoch maximum schedule (App. E) is
not proven (notes §2.10): it is offered by :func:`cc_epsilon` only as a Bound with
``rigorous=False`` (never used by the certification method).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from verifier._types import Bound, Direction, Quantity, Side
from verifier._validation import check_choice, check_open_unit
from verifier.errors import InvalidArgument

__all__ = [
    "CITATION_CC",
    "CC_STEP",
    "SCHEDULES",
    "TEMPERATURES",
    "StepPair",
    "cc_epsilon",
    "cc_pld",
    "compose_step_pairs",
    "reverse_hazard_bounds",
    "rounded_step_pair",
    "step_pairs",
]

CITATION_CC = "Schuchardt & Kalinin, Algorithm 4 (Thm 4.6, Lemma 4.7, Thm D.3 / Cor D.4) with the union-bound schedule; PLD composition"

#: Temperatures of the variational family (App. F.4); math.inf is the uniform ψ (Option 1).
TEMPERATURES = (math.inf, 10**-1, 10**-0.5, 1.0, 10**0.5, 10.0)
#: Ratio of the geometric grid the tail sums are rounded up to.
_TAIL_GRID = 1.0 + 2.0**-5


@dataclass(frozen=True)
class StepPair:
    """A per-step pair: distinct sorted means (units of σ) and tail sums P(z >= j)."""

    means: tuple
    tails: tuple


def _row_normalised(weights: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    total = weights.sum(axis=1, keepdims=True)
    return np.divide(weights, total, out=np.zeros_like(weights), where=total > 0)


def _candidate_weights(dist: npt.NDArray[np.float64], rows: npt.NDArray[np.int64]) -> list[npt.NDArray[np.float64]]:
    """ψ matrices (one row per position i in ``rows``: weights over the sorted positions j < i) of
    the variational family; ``dist`` holds the squared distances of those rows to every position."""
    below = rows[:, None] > np.arange(dist.shape[1])[None, :]
    out = []
    for t in TEMPERATURES:
        if math.isinf(t):
            w = below.astype(float)
        else:
            scaled = np.where(below, -dist / t, -np.inf)
            top = scaled.max(axis=1, keepdims=True)
            w = np.where(below, np.exp(scaled - np.where(np.isfinite(top), top, 0.0)), 0.0)
        out.append(_row_normalised(w))
    out.append(_row_normalised((below & (dist > 0)).astype(float)))  # Remark D.5
    return out


def reverse_hazard_bounds(
    gram_past: npt.NDArray[np.float64], direction: Direction, quantile: float, first: int = 0
) -> npt.NDArray[np.float64]:
    """λ̄ (sorted positions) from the Gram matrix of the sorted past prefixes (units of σ) and
    Φ⁻¹(β) = ``quantile`` (module docstring, steps 2–3), for the positions >= ``first`` (the others
    are returned as 1: the caller does not use them). Cost O((b − first)·b²) per candidate ψ."""
    k = gram_past
    b = k.shape[0]
    diag = np.diagonal(k)
    rows = np.arange(first, b)
    dist = np.maximum(diag[rows, None] + diag[None, :] - 2 * k[rows], 0.0)
    tau = np.full(len(rows), -np.inf)
    best_nu = np.zeros((len(rows), b))  # REMOVE: the ψ with the best simple bound is refined below
    best_xi = np.zeros(len(rows))
    for psi in _candidate_weights(dist, rows):
        has = psi.sum(axis=1) > 0
        with np.errstate(divide="ignore", invalid="ignore"):
            kl = np.where(psi > 0, psi * np.log(psi * np.maximum(rows, 1)[:, None]), 0.0).sum(axis=1)
        pk = psi @ k  # row i: Σ_j ψ_ij K_j·
        esq = psi @ diag
        xi = np.sqrt(np.maximum(diag[rows] - 2 * np.einsum("ij,ij->i", psi, k[rows]) + np.einsum("ij,ij->i", pk, psi), 0.0))
        base = (diag[rows] - esq) / 2 - kl
        if direction is Direction.ADD:
            candidate = base + xi * quantile
        else:
            nu = (pk - k[rows]) + base[:, None]
            candidate = nu.min(axis=1) + xi * quantile  # valid: every term is at most Φ((τ − min ν)/ξ)
            better = has & (candidate > tau)
            best_nu[better] = nu[better]
            best_xi[better] = xi[better]
        tau = np.where(has, np.maximum(tau, candidate), tau)
    if direction is Direction.REMOVE:
        found = np.isfinite(tau)
        if np.any(found):
            tau[found] = np.maximum(tau[found], _mixture_quantile(best_nu[found], best_xi[found], quantile))
    identical = ~((rows[:, None] > np.arange(b)[None, :]) & (dist > 0)).any(axis=1)
    tau = np.where(identical, 0.0, tau)
    lam = np.ones(b)
    lam[rows] = 1.0 / (1.0 + rows * np.exp(np.minimum(tau, 700.0)))
    lam[0] = 1.0
    return lam


#: Bisection steps for the REMOVE quantile (the bracket [q(β), q(bβ)]·ξ shrinks 2^-30-fold).
_QUANTILE_STEPS = 30


def _mixture_quantile(nu: npt.NDArray[np.float64], xi: npt.NDArray[np.float64], quantile: float) -> npt.NDArray[np.float64]:
    """Row-wise τ with (1/b) Σ_k Φ((τ − ν_k)/ξ) <= β (Theorem D.3), β = Φ(``quantile``): bisection
    between min ν + ξΦ⁻¹(β) (always valid: every term is at most Φ((τ − min ν)/ξ)) and
    min ν + ξΦ⁻¹(bβ) (never valid beyond: the smallest term alone exceeds β there), returning the
    low end of the final interval, where the condition was checked."""
    from scipy.special import log_ndtr, ndtr, ndtri

    b = nu.shape[1]
    low_nu = nu.min(axis=1)
    lo = low_nu + xi * quantile
    hi = low_nu + xi * float(ndtri(min(0.5, b * float(ndtr(quantile)))))
    target = float(log_ndtr(quantile)) + math.log(b)
    safe = xi > 0
    scale = np.where(safe, xi, 1.0)[:, None]
    for _ in range(_QUANTILE_STEPS):
        mid = (lo + hi) / 2
        terms = log_ndtr((mid[:, None] - nu) / scale)
        top = terms.max(axis=1)
        log_sum = top + np.log(np.exp(terms - top[:, None]).sum(axis=1))
        ok = log_sum <= target - 1e-12  # a margin for the rounding of the log-sum
        lo = np.where(ok & safe, mid, lo)
        hi = np.where(ok | ~safe, hi, mid)
    return np.where(safe, lo, low_nu)


def _grid_up(x: float) -> float:
    """The smallest point of the grid {_TAIL_GRID^-k} at or above x·(1 + 1e-9), capped at 1."""
    if x <= 0:
        return 0.0
    k = math.floor(-math.log(x * (1 + 1e-9)) / math.log(_TAIL_GRID))
    return min(1.0, _TAIL_GRID**-k)


def _step_pair(current: npt.NDArray[np.float64], lam: npt.NDArray[np.float64]) -> StepPair:
    """Merge equal means and round the tail sums up (module docstring, step 4)."""
    # P(z >= i) = 1 − Π_{j>=i} (1 − λ̄_j)
    with np.errstate(divide="ignore"):  # λ̄_1 = 1: log 0 = −∞, and P(z >= 1) = 1
        log_keep = np.cumsum(np.log1p(-np.minimum(lam, 1.0))[::-1])[::-1]
    tails = -np.expm1(log_keep)
    means, starts = np.unique(current, return_index=True)
    return rounded_step_pair(means, tails[starts])


def rounded_step_pair(means: npt.NDArray[np.float64], tails: npt.NDArray[np.float64]) -> StepPair:
    """The StepPair of a mixing law with strictly increasing ``means`` and tail sums ``tails``
    (P(z >= j)), the tails rounded UP to the geometric grid (a stochastically larger law: a
    dominating per-step pair, Lemma 4.2), kept non-increasing, zero tails dropped."""
    rounded = [1.0] + [_grid_up(float(t)) for t in tails[1:]]
    for j in range(1, len(rounded)):
        rounded[j] = min(rounded[j], rounded[j - 1])
    keep = [0] + [j for j in range(1, len(rounded)) if rounded[j] > 0]
    return StepPair(tuple(float(means[j]) for j in keep), tuple(rounded[j] for j in keep))


#: Failure-probability schedules: "union" (proven: Theorem 4.6 + a union bound over N(b − 1)
#: bounds) and "hybrid" (App. E: per-epoch maximum of λ̄ from epoch 2 on, at δ_E/(k(b − 1)) each —
#: the maximum step is asserted without proof, notes §2.10, so its results are never rigorous).
SCHEDULES = ("union", "hybrid")


def step_pairs(mu: npt.ArrayLike, direction: Direction, delta_e: float, schedule: str = "union") -> Counter:
    """Counter of the per-step pairs (StepPair → number of steps) of Algorithm 4 in ``direction``
    with failure budget ``delta_e`` under ``schedule`` (see SCHEDULES)."""
    from scipy.special import ndtri

    m = np.asarray(mu, dtype=float)
    if m.ndim != 2 or np.any(m < 0) or not np.all(np.isfinite(m)):
        raise InvalidArgument("mu", f"shape {m.shape}", "must be a finite, non-negative b×N array of means")
    if not isinstance(direction, Direction):
        raise InvalidArgument("direction", direction, "must be Direction.ADD or Direction.REMOVE")
    budget = check_open_unit("delta_e", delta_e)
    schedule = check_choice("schedule", schedule, SCHEDULES)
    b, n_steps = m.shape
    epochs = max(1, n_steps // b)
    first_epoch = float(ndtri(budget / (n_steps * max(b - 1, 1))))
    later_epochs = float(ndtri(budget / (epochs * max(b - 1, 1))))
    k = np.zeros((b, b))
    out: Counter = Counter()
    pending: list[tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]] = []  # hybrid: (sorted means, λ̄) of the epoch
    for n in range(n_steps):
        column = m[:, n]
        if np.any(column > 0):
            order = np.argsort(column, kind="stable")
            if schedule == "union" or n < b:
                first = int(np.searchsorted(column[order], column[order][0], side="right"))  # λ̄ of the lowest-mean group is unused
                lam = reverse_hazard_bounds(k[np.ix_(order, order)], direction, first_epoch, first)
                out[_step_pair(column[order], lam)] += 1
            else:
                pending.append((column[order], reverse_hazard_bounds(k[np.ix_(order, order)], direction, later_epochs)))
        k += np.outer(column, column)
        if pending and (n + 1) % b == 0 or n == n_steps - 1:
            if pending:
                epoch_max = np.max([lam for _, lam in pending], axis=0)
                for current, _ in pending:
                    out[_step_pair(current, epoch_max)] += 1
                pending = []
    return out


#: Grid step of the per-step PLDs (loss units); the composed bracket's width shows its effect.
CC_STEP = 2.0**-10


def _as_pair(pair: StepPair):
    """The dominating pair of a per-step mixture; (1 − q)N(0) + qN(c) is exactly the Poisson-subsampled
    Gaussian with sensitivity c and rate q, whose PLD construction is specialised (and faster)."""
    from verifier.pairs import Gaussian
    from verifier.pairs.mixture import GaussianMixture
    from verifier.pairs.subsampled import PoissonSubsampled

    if len(pair.means) == 2 and pair.means[0] == 0.0:
        return PoissonSubsampled(Gaussian(1.0, pair.means[1]), pair.tails[1])
    return GaussianMixture(1.0, pair.means, pair.tails)


def cc_pld(mu: npt.ArrayLike, direction: Direction, delta_e: float, step: float = CC_STEP, schedule: str = "union"):
    """PLD bracket of the composed per-step pairs (module docstring) in ``direction``, or None when
    no step releases anything about the element (δ_PLD = 0). Under the "union" schedule
    δ(ε) <= bracket.delta(ε).upper + δ_E; under "hybrid" that is NOT proven (see SCHEDULES)."""
    return compose_step_pairs(step_pairs(mu, direction, delta_e, schedule), direction, step)


def compose_step_pairs(pairs: Counter, direction: Direction, step: float = CC_STEP):
    """PLD bracket (both sides) in ``direction`` of the composition of the per-step pairs of the
    Counter ``pairs`` (StepPair → number of steps), each self-composed once; None when empty."""
    from verifier.pld import pair_bracket

    out = None
    for pair, count in sorted(pairs.items(), key=lambda item: (item[0].means, item[0].tails)):
        one = pair_bracket(_as_pair(pair), direction, step)
        one = one.self_compose(count) if count > 1 else one
        out = one if out is None else out.compose(one)
    return out


def cc_epsilon(mu: npt.ArrayLike, direction: Direction, delta: float, schedule: str = "union", step: float = CC_STEP) -> Bound:
    """ε(δ) of the CC accountant in ``direction`` with δ_E = δ/2 (App. B.2) as a Bound: UPPER and
    rigorous under the "union" schedule; under "hybrid" the same number with ``rigorous=False`` and a
    note (the per-epoch maximum is unproven, notes §2.10)."""
    target = check_open_unit("delta", delta)
    bracket = cc_pld(mu, direction, target / 2, step, schedule)
    value = 0.0 if bracket is None else float(bracket.epsilon(target / 2).upper)
    proven = schedule == "union"
    note = "delta_E = delta/2" if proven else "hybrid schedule (per-epoch max of the reverse hazard, App. E): NOT PROVEN, not a certificate"
    citation = CITATION_CC if proven else CITATION_CC.replace("the union-bound schedule", "the hybrid schedule of App. E (unproven)")
    return Bound(value, Side.UPPER, direction, Quantity.EPSILON, target, f"matrix-cc:{schedule}", citation, error_budget=target / 2, rigorous=proven, note=note)
