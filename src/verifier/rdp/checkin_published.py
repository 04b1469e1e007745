"""Formulas of Liew, Hasegawa & Takahashi ("Privacy amplification via shuffled check-ins") as they
are printed, for reproducing the paper: none of them is a proven bound, so each returns a
:class:`PublishedValue` (never a :class:`~verifier._types.Bound`) and none enters a verdict.

- Lemma 1 / Eq. (2), the "DP → RDP conversion": as printed it is the smallest order-λ Rényi
  divergence of a binary pair on the (ε, δ) boundary, the form of an RDP → DP threshold, not a
  DP → RDP upper bound (notes §2, errata 1). With δ = 0 it gives 0 at every order, while randomized
  response with ε0 = 1, an ε0-DP mechanism, has D_2 = 0.7353: it is NOT an upper bound. Every
  upper-bound curve of the paper (baseline, Approaches 1 and 2, Table 2) goes through it.
- Thm 4 as printed: the sum over k starts at 1 (the k = 0 term (1 − γ)^n is missing, errata 10),
  which makes it smaller than Eq. (5), and negative (below every RDP) when (1 − γ)^n is large; the
  restored form is the rigorous :func:`verifier.rdp.checkin.theorem4_upper`.
- Thm 5 (subsampled shuffle Gaussian): WBK's upper-bound device fed with Thm 3's specific-pair
  divergence, a LOWER bound; the combination is neither an upper nor a lower bound, labelled
  "optimistic" (notes §3.6, errata 11).
- FMT (Feldman, McMillan & Talwar 2021, Thm 3.1/3.8) as printed in the paper's Eqs. (10)–(11),
  with its regime condition ε0 <= ln(n / (16 ln(2/δ1))) reported beside the value: outside it the
  value is only a formula.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from verifier._validation import check_integer, check_nonnegative, check_open_unit, check_positive
from verifier.pairs import Gaussian
from verifier.rdp.checkin import wbk_log_moment, wbk_mixture_upper
from verifier.rdp.shuffle import shuffle_lower

__all__ = [
    "PublishedValue",
    "lemma1_printed",
    "theorem4_printed",
    "theorem5_optimistic",
    "fmt_shuffle_printed",
    "approach1_printed",
    "approach2_printed",
    "lemma3_epsilon",
    "theorem1_printed",
    "baseline_epsilon",
    "LabelledCurve",
    "checkin_results",
    "RESULT_ORDERS",
]

PUBLISHED = "published_formula"
OPTIMISTIC = "optimistic"


@dataclass(frozen=True)
class PublishedValue:
    """A number computed from a formula as published; ``label`` is "published_formula" (not a proven
    bound) or "optimistic" (mixes a lower bound into an upper-bound device). ``in_regime`` is True
    or False where the source states a validity condition, None where it states none."""

    value: float
    label: str
    citation: str
    note: str = ""
    in_regime: bool | None = None

    def to_dict(self) -> dict:
        return {"value": self.value, "label": self.label, "citation": self.citation, "note": self.note, "in_regime": self.in_regime}


def _lemma1_log_m(t: npt.NDArray[np.float64], lam: float, eps: float, d: float) -> npt.NDArray[np.float64]:
    """ln of Lemma 1's objective at r = δ + (1 − δ)·sigmoid(t) (vectorised; +∞ where r = 1)."""
    with np.errstate(over="ignore"):
        s = np.where(t > -700, 1.0 / (1.0 + np.exp(-np.minimum(t, 700))), np.exp(np.maximum(t, -745)))
    r = d + (1 - d) * s
    with np.errstate(divide="ignore", invalid="ignore"):
        a = lam * np.log(r) + (1 - lam) * np.log((1 - d) * s)
        b = lam * np.log1p(-r) + (1 - lam) * np.log(math.exp(eps) - r + d)
        out = np.logaddexp(a, b)
    return np.where(r < 1.0, out, np.inf)


def lemma1_printed(order: float, epsilon: float, delta: float) -> PublishedValue:
    """Lemma 1 / Eq. (2) as printed: ε + ln min_{r∈(δ,1)} [r^λ (r−δ)^{1−λ} + (1−r)^λ (e^ε − r + δ)^{1−λ}] / (λ−1).
    The infimum is taken on r = δ + (1 − δ)·sigmoid(t), t ∈ [−745, 40] (grid, then ternary refinement)."""
    lam = check_positive("order", order)
    eps = check_nonnegative("epsilon", epsilon)
    d = check_nonnegative("delta", delta)
    ts = np.linspace(-745.0, 40.0, 1571)
    values = _lemma1_log_m(ts, lam, eps, d)
    i = int(np.argmin(values))
    lo, hi = float(ts[max(i - 1, 0)]), float(ts[min(i + 1, len(ts) - 1)])
    best = float(values[i])
    for _ in range(60):
        probe = np.array([lo + (hi - lo) / 3, hi - (hi - lo) / 3])
        f1, f2 = _lemma1_log_m(probe, lam, eps, d)
        best = min(best, float(f1), float(f2))
        lo, hi = (lo, float(probe[1])) if f1 <= f2 else (float(probe[0]), hi)
    value = eps + best / (lam - 1)
    return PublishedValue(
        max(value, 0.0),
        PUBLISHED,
        "Liew et al. Lemma 1 / Eq. (2) as printed (cited to Asoodeh et al. 2021)",
        "not a DP->RDP upper bound: gives 0 for delta = 0 while an eps0-DP randomized response has D_2 > 0 (notes 2, errata 1)",
    )


def theorem4_printed(sigma: float, users: int, rate: float, orders: npt.ArrayLike) -> list[PublishedValue]:
    """Thm 4 exactly as printed (sum from k = 1, WBK per k with ε(j) = 2j/(kσ²)): per-round RDP at
    integer orders. Can be negative (when the k = 0 weight (1 − γ)^n is not negligible)."""
    logs = wbk_mixture_upper(Gaussian(sigma, 2.0), users, rate, "sum", orders, cap=False, with_k0=False)
    return [
        PublishedValue(float(v), PUBLISHED, "Liew et al. Thm 4 as printed (sum over k from 1)", "k = 0 term missing (errata 10)")
        for v in logs
    ]


def theorem5_optimistic(sigma: float, users: int, batch: int, orders: npt.ArrayLike) -> list[PublishedValue]:
    """Thm 5: WBK Thm 9 at rate γ = m/n fed with the shuffle-Gaussian divergence ε^SG_m(j) of Eq. (8)
    (a specific-pair LOWER bound) for j = 2 … λ: an "optimistic" value, never a bound."""
    n = check_integer("users", users, minimum=1)
    m = check_integer("batch", batch, minimum=1, maximum=n)
    ints = np.asarray(orders, dtype=np.int64)
    lam_max = int(ints.max())
    base = np.zeros((1, lam_max + 1))
    base[0, 2:] = np.arange(1, lam_max) * shuffle_lower(Gaussian(sigma), m, np.arange(2, lam_max + 1))  # (j−1)·ε^SG_m(j)
    out = []
    for lam in ints:
        log_e, _ = wbk_log_moment(base[:, : int(lam) + 1], np.array([math.log(m / n)]), int(lam))
        out.append(
            PublishedValue(float(log_e[0]) / (int(lam) - 1), OPTIMISTIC, "Liew et al. Thm 5 (WBK 2019 Thm 9 + Eq. (8))", "Eq. (8) is a lower bound fed to an upper-bound device (errata 11)")
        )
    return out


def fmt_shuffle_printed(epsilon0: float, delta0: float, reports: int, delta1: float) -> tuple[PublishedValue, PublishedValue]:
    """(ε, δ) of shuffling ``reports`` (ε0, δ0)-LDP reports, Eqs. (10)–(11) as printed (e^{ε0} in
    the δ term), with the regime condition ε0 <= ln(n / (16 ln(2/δ1))) in ``in_regime``."""
    e0 = check_nonnegative("epsilon0", epsilon0)
    d0 = check_nonnegative("delta0", delta0)
    n = check_integer("reports", reports, minimum=1)
    d1 = check_open_unit("delta1", delta1)
    factor = math.expm1(e0) / (math.exp(e0) + 1)
    eps = math.log1p(factor * (8 * math.sqrt(math.exp(e0) * math.log(4 / d1)) / math.sqrt(n) + 8 * math.exp(e0) / n))
    delta = d1 + (math.exp(e0) + 1) * (1 + math.exp(-e0) / 2) * n * d0
    regime = 16 * math.log(2 / d1) <= n and e0 <= math.log(n / (16 * math.log(2 / d1)))
    cite = "Liew et al. Eqs. (10)-(11) (Feldman, McMillan & Talwar 2021)"
    note = "" if regime else "outside the stated regime eps0 <= ln(n / (16 ln(2/delta1))): a formula only"
    return PublishedValue(eps, PUBLISHED, cite, note, regime), PublishedValue(delta, PUBLISHED, cite, note, regime)


def _fmt_per_k(epsilon0: float, delta0: float, ks: npt.NDArray[np.int64], delta1: float) -> list[tuple[float, float, bool]]:
    """(ε_k, δ_k, in regime) of Eqs. (10)–(11) for each k in ``ks`` (evaluated regardless of the regime)."""
    out = []
    for k in ks:
        eps, delta = fmt_shuffle_printed(epsilon0, delta0, int(k), delta1)
        out.append((eps.value, delta.value, bool(eps.in_regime)))
    return out


def _bulk(users: int, rate: float, span: float | None) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64]]:
    """(ln w_k for k = 0 … n, the k >= 1 kept): all of them, or (``span``, the notes' §4.0 recipe for
    reproducing the paper) those with ln w_k >= max − span."""
    from verifier.rdp.checkin import binomial_log_weights

    log_w = binomial_log_weights(check_integer("users", users, minimum=1), rate)
    ks = np.arange(1, users + 1)
    if span is not None:
        ks = ks[log_w[1:] >= np.max(log_w) - span]
    return log_w, ks


def _mixture(log_w: npt.NDArray[np.float64], ks: npt.NDArray[np.int64], log_e: npt.ArrayLike, lam: int) -> float:
    terms = np.concatenate([[log_w[0]], log_w[ks] + np.asarray(log_e, dtype=float)])
    top = float(np.max(terms))
    return (top + math.log(float(np.sum(np.exp(terms - top))))) / (lam - 1)


def approach2_printed(
    epsilon0: float, delta0: float, users: int, rate: float, orders: npt.ArrayLike, delta1: float, span: float | None = None
) -> list[PublishedValue]:
    """Approach 2 (§3.3, "subsampled shuffling conversion") as printed: per k, FMT (Eqs. 10–11,
    evaluated whatever the regime), Balle et al. 2018 Thm 9 at rate k/n (Eq. 12), Lemma 1 as printed,
    then Eq. (5). Per-round "RDP" at each order; a published formula, not a bound (Lemma 1).
    ``span``: keep only the k with ln w_k >= max − span (:func:`_bulk`)."""
    log_w, ks = _bulk(users, rate, span)
    per_k = _fmt_per_k(epsilon0, delta0, ks, delta1)
    regime = all(r for _, _, r in per_k)
    out = []
    for lam in np.asarray(orders, dtype=float):
        log_e = []
        for k, (eps_k, delta_k, _) in zip(ks, per_k):
            eps2 = math.log1p(k / users * math.expm1(eps_k))
            log_e.append((lam - 1) * lemma1_printed(lam, eps2, min(k / users * delta_k, 1.0)).value)
        out.append(PublishedValue(_mixture(log_w, ks, log_e, lam), PUBLISHED, "Liew et al. Approach 2 (Table 1) as printed", "goes through Lemma 1", regime))
    return out


def approach1_printed(
    epsilon0: float, delta0: float, users: int, rate: float, orders: npt.ArrayLike, delta1: float, span: float | None = None
) -> list[PublishedValue]:
    """Approach 1 (§3.3, "shuffling conversion") as printed: per k, FMT (Eqs. 10–11), Lemma 1 for the
    shuffle RDP at every j <= λ, WBK's ternary bounds at rate k/n (with ε(∞) = ∞ and the j = 2 term
    4(e^{ε(2)} − 1) as printed), then Eq. (5). ``span`` as in :func:`approach2_printed`."""
    log_w, ks = _bulk(users, rate, span)
    per_k = _fmt_per_k(epsilon0, delta0, ks, delta1)
    ints = np.asarray(orders, dtype=np.int64)
    lam_max = int(ints.max())
    base = np.zeros((len(ks), lam_max + 1))  # base[row, j] = (j − 1)·(Lemma 1 shuffle RDP of k reports at order j)
    for row, (e, d, _) in enumerate(per_k):
        base[row, 2:] = [(j - 1) * lemma1_printed(j, e, min(d, 1.0)).value for j in range(2, lam_max + 1)]
    log_q = np.log(ks / users)
    regime = all(r for _, _, r in per_k)
    out = []
    for lam in ints:
        log_e, _ = wbk_log_moment(base[:, : int(lam) + 1], log_q, int(lam), second_order_min=False)
        out.append(PublishedValue(_mixture(log_w, ks, log_e, int(lam)), PUBLISHED, "Liew et al. Approach 1 (Table 1) as printed", "goes through Lemma 1", regime))
    return out


def theorem1_printed(
    epsilon0: float, delta0: float, users: int, rate: float, threshold: int, delta1: float, exact_constant: bool = False
) -> tuple[PublishedValue, PublishedValue]:
    """Thm 1 (the "first-cut" baseline): with B ~ Bin(n, γ) and β = P(B >= l) the exact one-sided
    binomial tail (footnote 6), one round is (ε_l, β + δ_l) with Eq. (4)/(15)

        ε_l = ln(1 + c·(8√(l e^{ε0} ln(4/δ1))/n + 8e^{ε0}/n)),  δ_l = (l/n)(δ1 + (e^{ε0} + 1)(1 + e^{−ε0}/2) l δ0),

    c = (e^{ε0} − 1)/e^{ε0} as printed, or (e^{ε0} − 1)/(e^{ε0} + 1), the exact composition of
    Eqs. (13) and (12) (``exact_constant``; notes §3.1: the printed one is looser). The δ term uses
    e^{ε0}, the largest of the paper's three variants. ``in_regime``: the FMT condition at l; the
    proof also needs FMT for every k < l, where the condition fails, so the pair is a published
    formula, not a bound."""
    from scipy.stats import binom

    e0 = check_nonnegative("epsilon0", epsilon0)
    d0 = check_nonnegative("delta0", delta0)
    n = check_integer("users", users, minimum=1)
    l_ = check_integer("threshold", threshold, minimum=1, maximum=n)
    d1 = check_open_unit("delta1", delta1)
    c = math.expm1(e0) / (math.exp(e0) + 1 if exact_constant else math.exp(e0))
    eps = math.log1p(c * (8 * math.sqrt(l_ * math.exp(e0) * math.log(4 / d1)) / n + 8 * math.exp(e0) / n))
    beta = float(binom.sf(l_ - 1, n, rate))
    delta = beta + l_ / n * (d1 + (math.exp(e0) + 1) * (1 + math.exp(-e0) / 2) * l_ * d0)
    regime = 16 * math.log(2 / d1) <= l_ and e0 <= math.log(l_ / (16 * math.log(2 / d1)))
    cite = "Liew et al. Thm 1 / Eq. (4) (" + ("constant of the exact composition of Eqs. 12-13" if exact_constant else "as printed") + ")"
    note = "needs FMT's regime for every k < l" + ("" if regime else "; fails already at l")
    return PublishedValue(eps, PUBLISHED, cite, note, regime), PublishedValue(min(delta, 1.0), PUBLISHED, cite, note, regime)


def baseline_epsilon(
    epsilon0: float, delta0: float, users: int, rate: float, rounds: int, delta: float, delta1: float, orders: npt.ArrayLike, exact_constant: bool = False
) -> tuple[float, int]:
    """The paper's multi-round baseline: Thm 1's per-round (ε, δ) for each threshold l, Lemma 1 as
    printed to RDP, T-fold composition, Lemma 3; the smallest final ε over l (each l is one published
    value) and the l that gives it. A published formula, never a bound."""
    lam = np.asarray(orders, dtype=float)
    best, best_l = math.inf, 0
    mean = users * rate
    top = min(users, int(mean + 8 * math.sqrt(mean) + 20))  # beyond, β is negligible and ε_l only grows
    for l_ in range(max(1, int(mean)), top + 1):
        eps, dlt = theorem1_printed(epsilon0, delta0, users, rate, l_, delta1, exact_constant)
        if dlt.value >= 1.0:
            break
        rdp = [lemma1_printed(a, eps.value, dlt.value).value for a in lam]
        value = lemma3_epsilon(rdp, lam, rounds, delta)
        if value < best:
            best, best_l = value, l_
    return best, best_l


def lemma3_epsilon(rdp: npt.ArrayLike, orders: npt.ArrayLike, rounds: int, delta: float) -> float:
    """Lemma 3 / Eq. (9): min over the orders of T·R(λ) + [ln(1/δ) + (λ−1) ln(1 − 1/λ) − ln λ]/(λ−1),
    clipped at 0 (a formula applied to whatever R is given)."""
    r = np.asarray(rdp, dtype=float)
    lam = np.asarray(orders, dtype=float)
    t = check_integer("rounds", rounds, minimum=1)
    d = check_open_unit("delta", delta)
    return max(0.0, float(np.min(t * r + (math.log(1 / d) + (lam - 1) * np.log1p(-1 / lam) - np.log(lam)) / (lam - 1))))


#: Orders at which :func:`checkin_results` reports per-round RDP values.
RESULT_ORDERS = (2, 4, 8, 16, 32, 64)


@dataclass(frozen=True)
class LabelledCurve:
    """One result of the paper (or verifier's own) as per-round RDP values at :data:`RESULT_ORDERS`,
    with its label: "UPPER" / "LOWER" (rigorous bounds), "published_formula" or "optimistic"."""

    result: str
    label: str
    values: tuple[float, ...]


def checkin_results(scheme: object, orders: npt.ArrayLike = RESULT_ORDERS) -> list[LabelledCurve]:
    """Every result of Liew et al. that applies to a CheckIn or Shuffle scheme, per-round RDP at
    ``orders``, each with its label (``verifier bounds`` prints them below the δ(ε) table)."""
    from verifier.rdp.checkin import checkin_lower, checkin_upper, theorem4_upper
    from verifier.schemes import CheckIn, Shuffle

    ints = np.asarray(orders, dtype=np.int64)
    out: list[LabelledCurve] = []

    def add(result: str, label: str, values: npt.ArrayLike) -> None:
        out.append(LabelledCurve(result, label, tuple(float(v) for v in values)))

    if isinstance(scheme, Shuffle):
        add("Thm 3 / Eq. (8) (specific pair)", "LOWER", shuffle_lower(scheme.pair, scheme.users, ints))
        if isinstance(scheme.pair, Gaussian):
            add("Cor 1: lambda/(2 sigma^2) (Eq. 8 <= unshuffled Gaussian)", "UPPER on Eq. (8) only", ints * scheme.pair.sensitivity**2 / (2 * scheme.pair.sigma**2))
        return out
    if not isinstance(scheme, CheckIn):
        return out
    pair, n, gamma, agg = scheme.pair, scheme.users, scheme.rate, scheme.aggregation
    add(f"Eq. (5) + per-k min(WBK Thm 9, base RDP), {agg}", "UPPER", checkin_upper(pair, n, gamma, ints, agg))
    add(f"Eq. (5), exact moments of one specific pair, {agg}", "LOWER", checkin_lower(pair, n, gamma, ints, agg))
    if isinstance(pair, Gaussian) and agg == "sum":
        add("Thm 4 with the k = 0 term restored", "UPPER", theorem4_upper(pair, n, gamma, ints))
        if pair.sensitivity == 2.0:
            add("Thm 4 as printed (k from 1)", PUBLISHED, [v.value for v in theorem4_printed(pair.sigma, n, gamma, ints)])
    if isinstance(pair, Gaussian) and agg == "shuffle":
        batch = max(1, round(n * gamma))
        add(f"Thm 5 (m = round(n gamma) = {batch})", OPTIMISTIC, [v.value for v in theorem5_optimistic(pair.sigma / pair.sensitivity, n, batch, ints)])
    return out
