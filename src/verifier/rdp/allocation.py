"""RDP of k-out-of-t random allocation (Feldman & Shenfeld, "Privacy amplification by random
allocation", §4.4 and App. E), both directions, plus the Gaussian add-direction δ bound.

REMOVE, integer α >= 2, EXACT for k = 1 (α = 2, 3 by their closed forms,
:func:`allocation_remove_closed_form`; derivation: proofs/allocation_alpha2.py) (Thm 4.8 / Lemma E.1, with the corrected factor
e^{(p−1)R_p} of notes §6.2 item 9): with m_j = E_Q[(P/Q)^j],

    e^{(α−1) R_α(P̄_t ‖ Q^{⊗t})} = t^{−α} Σ_{Π ∈ 𝚷_t(α)} binom(t; C(Π)) binom(α; Π) Π_{p∈Π} m_p
                                = α!·[x^α] (Σ_j m_j x^j/(j!·t^j))^t,

the partition sum being the multinomial expansion of E[(Σ_i r_i / t)^α] grouped by partitions
(derivation: proofs/allocation_partition_sum.py). The power of the truncated series is computed for
all orders at once by the log-domain kernel (Miller's recurrence for t >= α_max, binary
exponentiation below). Slow twin: :func:`verifier.reference.rdp.allocation_remove_renyi`.

ADD, UPPER, every real α > 1 [DERIVED here from the Jensen step of Lemma E.3]: with r̄ the average
of the t ratios, r̄ >= Π r_i^{1/t} gives E_{Q^t}[r̄^{−(α−1)}] <= (E_Q[(P/Q)^{−(α−1)/t}])^t, i.e.

    R_α(Q^{⊗t} ‖ P̄_t) <= D_{1 + (α−1)/t}(Q ‖ P)        (Gaussian: (1 + (α−1)/t)·Δ²/(2σ²)).

ADD, UPPER, Gaussian, every real α > 1 [DERIVED: proofs/allocation_add_taylor.py]: the Jensen bound
stays near Δ²/(2σ²) for every t; with m = α − 1, M₂ = E_Q[(P/Q)²] = e^{Δ²/σ²}, v = M₂ − 1 and any
s₀ ∈ (0, 1), p > 1, q = p/(p − 1),

    E[r̄^{−m}] <= 1 + K(1)·v/t + Σ_j (K(s_j) − K(s_{j+1}))·B(s_{j+1})
                 + e^{m·D_{1+mp/t}(Q‖P)}·e^{−t(1−s₀)²/(2 M₂ q)},        K(s) = m(m+1)s^{−(m+2)}/2,

for bins s₀ < s₁ < … < s_J = 1 and B(s) = min(v/t, ((1−s)² + 2M₂/t)·e^{−t(1−s)²/(2M₂)}) >=
E[(r̄−1)²; r̄ < s]: second-order Taylor with Lagrange remainder on {r̄ >= s₀}, the remainder's
coefficient bounded bin by bin (telescoped), Hölder on {r̄ < s₀} with the Jensen bound for
E[r̄^{−mp}], and Maurer's lower tail for non-negative summands, P(r̄ <= s) <= e^{−t(1−s)²/(2M₂)}
(integrated for B). It is ≈ α(e^{Δ²/σ²} − 1)/(2t) for large t; the curve takes, per order, the
smaller of the two bounds; the bins, s₀ and p are picked on a grid (every choice is valid).

ADD δ for the Gaussian, UPPER (Thm 4.9 / Cor 4.10 with the sign fixed as in notes §6.2 item 10:
ε' = ε − (t−1)·R_{1/t}(P‖Q), which is ε − (1 − 1/t)Δ²/(2σ²) for the Gaussian): the add loss is at
most the loss of N(0, tσ²) vs N(Δ, tσ²) plus (1 − 1/t)Δ²/(2σ²) pointwise, so over r = k·E rounds

    δ_add(ε) <= δ_{N(σ·√(t/r))}(ε − r·(1 − 1/t)Δ²/(2σ²)).

(The random-allocation repository adds the shift once rather than r times for k·E > 1; the
pointwise argument gives r times, which is what is used here.)

k > 1 and epochs E: Lemma 3.2's reduction to k·E rounds of ⌊t/k⌋-step allocation (floor, never
ceiling: notes §6.2 item 29), composed by RDP addition; exact only for k = 1.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
from flint import arb

from verifier._directed import EXACT_RTOL, arb_bound, up, with_precision
from verifier._types import Bracket, Direction, Side
from verifier._validation import check_integer, check_real
from verifier.errors import InvalidArgument
from verifier.pairs import DominatingPair, Gaussian
from verifier.rdp.curve import RdpCurve, check_orders
from verifier.rdp.interpolation import interpolate
from verifier.rdp.moments import log_moments, renyi_from_log_coefficients, renyi_upper
from verifier.rdp.series import log_power

__all__ = [
    "allocation_curve",
    "allocation_remove_integer",
    "allocation_remove_closed_form",
    "allocation_remove_flagged",
    "allocation_add_gaussian_delta",
    "allocation_add_gaussian_epsilon",
    "allocation_add_gaussian_shift",
    "CITATION_REMOVE",
    "CITATION_ADD",
    "CITATION_ADD_TAYLOR",
    "CITATION_ADD_DELTA",
]

CITATION_REMOVE = "Feldman & Shenfeld, Thm 4.8 / Lemma E.1 (exact remove RDP), power-series form; closed forms at orders 2, 3"
CITATION_ADD = "Feldman & Shenfeld, Lemma E.3 (Jensen step), RDP form derived: R_a <= D_{1+(a-1)/t}(Q||P)"
CITATION_ADD_TAYLOR = (
    "min of the Jensen bound (Feldman & Shenfeld Lemma E.3) and a Taylor/Hoelder/Maurer-tail bound "
    "on E[mean ratio^-(a-1)] (derived: proofs/allocation_add_taylor.py)"
)
CITATION_ADD_DELTA = "Feldman & Shenfeld, Thm 4.9 / Cor 4.10 (add), sign of eps' corrected (notes 6.2 item 10)"

#: An RDP value is flagged exact when its rigorous bracket is at most EXACT_RTOL wide, relative
#: (the remove series at t = 10⁶ is only good to ~2e-9: issue 19); re-exported from _directed.
#: Orders with a closed form (CLOSED_FORM_ORDERS) use it instead of the series.
CLOSED_FORM_ORDERS = (2, 3)

#: Largest step count accepted (t·α_max must stay an exact integer in the kernel).
MAX_STEPS = 10**12


def _rounds(steps: int, k: int, epochs: int) -> tuple[int, int]:
    """(t', rounds) of the Lemma 3.2 reduction: k·E rounds of ⌊t/k⌋-step allocation."""
    t = check_integer("steps", steps, minimum=1, maximum=MAX_STEPS)
    kk = check_integer("k", k, minimum=1, maximum=t)
    e = check_integer("epochs", epochs, minimum=1)
    return t // kk, kk * e


def allocation_remove_integer(
    pair: DominatingPair, steps: int, orders: npt.NDArray[np.int64], side: Side = Side.UPPER
) -> npt.NDArray[np.float64]:
    """Bounds on ``side`` (exact up to rounding) of R_α(P̄_t ‖ Q^{⊗t}) at integer orders α >= 2,
    for 1-out-of-t allocation (Thm 4.8), via the power-series form. Every series coefficient is
    non-negative in the moments, so moments and errors rounded toward ``side`` keep the side."""
    t = check_integer("steps", steps, minimum=1, maximum=MAX_STEPS)
    n = int(orders.max()) + 1
    log_m = log_moments(pair, Direction.REMOVE, n, side)
    infinite = np.flatnonzero(np.isinf(log_m))
    cut = int(infinite[0]) if infinite.size else n
    log_ta = np.empty(cut)  # ln(t·a_j) with a_j = m_j/(j! t^j), i.e. ln m_j − ln j! − (j−1) ln t
    with with_precision():
        log_t = arb(t).log()
        for j in range(cut):
            log_ta[j] = 0.0 if j == 0 else arb_bound(arb(float(log_m[j])) - arb(j + 1).lgamma() - (j - 1) * log_t, side)
    coeff, err = log_power(log_ta, t, cut)
    values = np.full(len(orders), math.inf)
    finite = orders < cut
    values[finite] = renyi_from_log_coefficients(orders[finite], coeff, err, side=side)
    return values


def allocation_remove_closed_form(pair: DominatingPair, steps: int, order: int, side: Side) -> float:
    """Bound on ``side`` of R_α(P̄_t ‖ Q^{⊗t}), α = 2 or 3, 1-out-of-t allocation, from the closed
    forms of proofs/allocation_alpha2.py (Thm 4.8 at α = 2, 3, exact):

        R_2 = log1p(expm1(D_2)/t),    R_3 = ½·log1p((expm1(2·D_3) + 3(t − 1)·expm1(D_2))/t²),

    with D_p = D_p(P‖Q) (m_p = e^{(p−1) D_p}). Both are increasing in D_2 and D_3, so the ends of
    the pair's rigorous brackets on ``side`` give a bound on ``side``; evaluated in ball arithmetic
    and rounded outward (no cancellation: the series form loses ~t·u relative, issue 19)."""
    t = check_integer("steps", steps, minimum=1, maximum=MAX_STEPS)
    if order not in CLOSED_FORM_ORDERS:
        raise InvalidArgument("order", order, f"must be one of {CLOSED_FORM_ORDERS} (the orders with a closed form)")

    def divergence(p: int) -> float:
        bracket = pair.renyi(float(p), Direction.REMOVE)
        return float(bracket.upper if side is Side.UPPER else bracket.lower)

    d2 = divergence(2)
    d3 = divergence(3) if order == 3 else 0.0
    if math.isinf(d2) or math.isinf(d3):
        return math.inf
    with with_precision():
        excess2 = arb(d2).expm1()
        if order == 2:
            return max(0.0, arb_bound((excess2 / t).log1p(), side))
        excess3 = (2 * arb(d3)).expm1()
        return max(0.0, arb_bound(((excess3 + 3 * (t - 1) * excess2) / (arb(t) ** 2)).log1p() / 2, side))


def _remove_bounds(pair: DominatingPair, steps: int, orders: npt.NDArray[np.int64], side: Side) -> npt.NDArray[np.float64]:
    """Bounds on ``side`` of the remove RDP at integer orders: the closed forms at α = 2, 3, the
    power series elsewhere."""
    values = allocation_remove_integer(pair, steps, orders, side)
    closed = np.isin(orders, CLOSED_FORM_ORDERS)
    values[closed] = [allocation_remove_closed_form(pair, steps, int(a), side) for a in orders[closed]]
    return values


def allocation_remove_flagged(
    pair: DominatingPair, steps: int, orders: npt.NDArray[np.int64], side: Side
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_]]:
    """(Bounds on ``side`` of R_α(P̄_t ‖ Q^{⊗t}) at integer orders α >= 2, exact flags), 1-out-of-t
    allocation. "exact" means exact to EXACT_RTOL: the series loses ~t·u relative (R_α ≈ c/t is a
    logarithm of 1 + O(1/t)), so the flag is earned by the bound on the other side, not assumed."""
    values = _remove_bounds(pair, steps, orders, side)
    other = _remove_bounds(pair, steps, orders, side.opposite)
    upper, lower = (values, other) if side is Side.UPPER else (other, values)
    with np.errstate(invalid="ignore"):
        exact = np.isfinite(upper) & (upper - lower <= EXACT_RTOL * upper)
    return values, exact


def _add_jensen(pair: DominatingPair, t: int, ints_or_orders: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """R_α(Q^{⊗t} ‖ P̄_t) <= D_{1+(α−1)/t}(Q ‖ P) (module docstring), the inner order rounded up."""
    out = np.empty(len(ints_or_orders))
    with with_precision():
        for i, alpha in enumerate(ints_or_orders):
            inner = arb_bound(1 + (arb(float(alpha)) - 1) / t, Side.UPPER)
            out[i] = renyi_upper(pair, inner, Direction.ADD)
    return out


#: Gaps g_j = 1 − s_j of the Taylor bins (decreasing, then 0) and the Hölder exponents tried; the
#: Hölder cut s₀ = 1 − g_i and p are chosen per order (every choice gives a valid bound).
_TAYLOR_GAPS = np.append(np.geomspace(0.999, 1e-6, 160), 0.0)
_TAYLOR_P = np.array([1.01, 1.05, 1.2, 1.5, 2.0, 3.0, 5.0, 10.0, 100.0])


def _add_taylor_gaussian(pair: Gaussian, t: int, orders: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """UPPER bound on R_α(Q^{⊗t} ‖ P̄_t) for the Gaussian pair by the binned Taylor/Hölder bound of
    the module docstring; the cut and p are chosen in floats, the bound at the choice is evaluated
    in arb."""
    rho_f = (pair.sensitivity / pair.sigma) ** 2 / 2
    m2_f = math.exp(2 * rho_f)
    out = np.full(len(orders), math.inf)
    g = _TAYLOR_GAPS
    g_next = g[1:]
    qs = _TAYLOR_P / (_TAYLOR_P - 1)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        log_vt = (math.log(math.expm1(2 * rho_f)) if rho_f < 300 else 2 * rho_f) - math.log(t)
        # bins' second-moment bounds: min(v/t, (g² + 2 M2/t)·e^{−t g²/(2 M2)}) at the bin's upper end
        use_tail = np.log(g_next**2 + 2 * m2_f / t) - t * g_next**2 / (2 * m2_f) < log_vt
        log_b = np.where(use_tail, np.log(g_next**2 + 2 * m2_f / t) - t * g_next**2 / (2 * m2_f), log_vt)
        for i, alpha in enumerate(orders):
            m = float(alpha) - 1
            if not m > 0 or not math.isfinite(m):
                continue
            log_k = math.log(m * (m + 1) / 2) - (m + 2) * np.log1p(-g)  # K(1 − g_j), K(1) last
            log_dk = log_k[:-1] + np.log(-np.expm1(log_k[1:] - log_k[:-1]))
            tails = np.logaddexp.accumulate((log_dk + log_b)[::-1])[::-1]  # Σ_{j >= cut}
            log_main = np.logaddexp(log_k[-1] + log_vt, tails)
            log_holder = m * (1 + m * _TAYLOR_P[None, :] / t) * rho_f - t * g[:-1, None] ** 2 / (2 * m2_f * qs[None, :])
            total = np.logaddexp(log_main[:, None], log_holder)
            if not np.isfinite(total).any():
                continue
            cut, ip = np.unravel_index(np.nanargmin(total), total.shape)
            with with_precision():
                rho = arb(pair.sensitivity) ** 2 / (2 * arb(pair.sigma) ** 2)
                m2, am, ph = (2 * rho).exp(), arb(m), arb(float(_TAYLOR_P[ip]))
                coef = am * (am + 1) / 2

                def k_at(gap: float) -> arb:
                    return coef * (1 - arb(gap)) ** (-(am + 2))

                vt = (2 * rho).expm1() / t
                main = coef * vt
                for j in range(cut, len(g) - 1):
                    gj = arb(float(g_next[j]))
                    bin_b = (gj**2 + 2 * m2 / t) * (-t * gj**2 / (2 * m2)).exp() if use_tail[j] else vt
                    main += (k_at(float(g[j])) - k_at(float(g_next[j]))) * bin_b
                g0 = arb(float(g[cut]))
                holder = (am * (1 + am * ph / t) * rho - t * g0**2 / (2 * m2 * (ph / (ph - 1)))).exp()
                out[i] = arb_bound((1 + main + holder).log() / am, Side.UPPER)
    return out


def allocation_curve(
    pair: DominatingPair, steps: int, orders: npt.ArrayLike, direction: Direction, k: int = 1, epochs: int = 1
) -> RdpCurve:
    """RDP curve (UPPER bounds, exact where flagged) of k-out-of-t random allocation over ``epochs``
    epochs in ``direction``. See the module docstring for the results used."""
    grid = check_orders(orders)
    t_round, rounds = _rounds(steps, k, epochs)
    if not isinstance(direction, Direction):
        raise InvalidArgument("direction", direction, "must be Direction.ADD or Direction.REMOVE")
    if direction is Direction.ADD:
        values = _add_jensen(pair, t_round, grid)
        if not isinstance(pair, Gaussian):
            return RdpCurve(grid, values, np.zeros(len(grid), dtype=bool), direction, CITATION_ADD).times(rounds)
        values = np.minimum(values, _add_taylor_gaussian(pair, t_round, grid))
        return RdpCurve(grid, values, np.zeros(len(grid), dtype=bool), direction, CITATION_ADD_TAYLOR).times(rounds)

    def at_integers(ints: npt.NDArray[np.int64]) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_]]:
        if k != 1:
            return _remove_bounds(pair, t_round, ints, Side.UPPER), np.zeros(len(ints), dtype=bool)
        return allocation_remove_flagged(pair, t_round, ints, Side.UPPER)

    values, exact = interpolate(grid, at_integers)
    return RdpCurve(grid, values, exact, direction, CITATION_REMOVE).times(rounds)


def allocation_add_gaussian_shift(pair: Gaussian, steps: int, k: int = 1, epochs: int = 1) -> tuple[Gaussian, float]:
    """(Gaussian pair of the composed tilted rounds, UPPER bound on the total loss shift) for
    Cor 4.10 (add): δ_add(ε) <= δ_{pair}(ε − shift). See the module docstring."""
    if not isinstance(pair, Gaussian):
        raise InvalidArgument("pair", pair, "Cor 4.10 (add) has a closed form for the Gaussian pair only")
    t_round, rounds = _rounds(steps, k, epochs)
    with with_precision():
        rho = arb(pair.sensitivity) ** 2 / (2 * arb(pair.sigma) ** 2)
        shift = arb_bound(rounds * (1 - arb(1) / t_round) * rho, Side.UPPER)
        # σ·√(t/r) rounded down: a smaller σ gives a larger δ, so this stays an upper bound.
        sigma_eff = arb_bound(arb(pair.sigma) * (arb(t_round) / rounds).sqrt(), Side.LOWER)
    return Gaussian(sigma_eff, pair.sensitivity), shift


def allocation_add_gaussian_delta(pair: Gaussian, steps: int, epsilon: float, k: int = 1, epochs: int = 1) -> float:
    """UPPER bound on the add-direction δ(ε) of Gaussian random allocation (Cor 4.10, sign fixed)."""
    eps = check_real("epsilon", epsilon)
    tilted, shift = allocation_add_gaussian_shift(pair, steps, k, epochs)
    with with_precision():
        shifted = arb_bound(arb(eps) - arb(shift), Side.LOWER)  # δ decreases in ε: round ε' down
    bracket: Bracket = tilted.delta(shifted, Direction.REMOVE)
    return float(bracket.upper)


def allocation_add_gaussian_epsilon(pair: Gaussian, steps: int, delta: float, k: int = 1, epochs: int = 1) -> float:
    """UPPER bound on the add-direction ε(δ) of Gaussian random allocation: ε_N(σ√(t/r))(δ) + shift."""
    tilted, shift = allocation_add_gaussian_shift(pair, steps, k, epochs)
    eps_upper = float(tilted.epsilon(delta, Direction.REMOVE).upper)
    return math.inf if math.isinf(eps_upper) else float(up(eps_upper + shift))
