"""A rigorous LOWER bound on δ(ε) (and on ε(δ)) of shuffled check-in (Liew, Hasegawa & Takahashi,
Eq. (3)) over T rounds, from the privacy-loss distribution of one specific pair of datasets.

The pair: the changed user's report from P, every other user's from Q (for additive noise with
records of norm <= Δ/2: the changed record +Δ/2 against −Δ/2, all others at −Δ/2). The release
seen through the sum of the reports is a post-processing of the shuffled multiset, so the
δ of the summed release bounds that of both aggregations from below. Given k check-ins, the changed
user is among them with probability q = k/n and the sum's law is the Poisson-subsampled pair
(q·P_k + (1 − q)·Q_k, Q_k) (Lemma A.4 of the random-allocation PLD paper for the subsampled loss)
with

- Gaussian(σ, Δ): P_k = N(Δ, kσ²), Q_k = N(0, kσ²) (the sum of k reports with N(0, σ²) noise each);
- a two-outcome finite pair (binary randomized response): P_k, Q_k = laws of the number of reports
  equal to outcome 1 among k (one from P and k − 1 from Q, or k from Q); for binary reports this count
  and k are the whole shuffled multiset, so this is the exact specific pair of the shuffle.

Because k is observed and has the same Binomial(n, γ) law under both datasets, the pair of one
round is the disjoint union of the per-k pairs with weights w_k, and its privacy profile is
f(κ) = Σ_k w_k f_k(κ) (hockey-stick divergences of a disjoint mixture add). Components with small
weight are replaced by a component with P = Q (profile max(0, 1 − κ) <= f_k(κ)), which gives a pair
dominated by the true one. The DOMINATED PLD of that pair is built from rigorous bounds on its
profile at the grid losses (:func:`verifier.pld.construction.pld_sides_from_profile`, ball-arithmetic
brackets of each component's δ), composed over the rounds (Steinke 2022, Thm 9; dominance survives
composition), and queried on its safe side. Finite-pair masses are float64 convolutions: their
rounding (< 1e-13 in total variation) is subtracted from every δ returned (:data:`MASS_SLACK`).
"""

from __future__ import annotations

import math

import numpy as np

from verifier._types import Direction, Dominance
from verifier._validation import check_integer, check_open_unit, check_real
from verifier.errors import NotApplicable
from verifier.pairs import DominatingPair, Gaussian
from verifier.pairs.finite import DiscretePair, FinitePair
from verifier.pairs.subsampled import PoissonSubsampled
from verifier.pld.construction import pld_sides_from_profile
from verifier.pld.distribution import DiscretePLD, compose
from verifier.rdp.checkin import binomial_log_weights

__all__ = ["sum_pair", "checkin_lower_pld", "checkin_delta_lower", "checkin_epsilon_lower", "checkin_fmt_pair", "MASS_SLACK"]

#: Subtracted from every δ lower bound: float64 rounding of the finite pairs' masses.
MASS_SLACK = 1e-12
#: Components with w_k below this fraction of the largest weight are replaced by P = Q.
WEIGHT_FLOOR = 1e-3
#: Profile grid: losses from LOSS_LOW to where every component's δ upper end is below PROFILE_FLOOR.
LOSS_LOW = -2.0
PROFILE_FLOOR = 1e-20
#: checkin_fmt_pair keeps every k with w_k above this fraction of the largest weight.
FMT_WEIGHT_FLOOR = 1e-16
MAX_LOSS = 64.0


def sum_pair(pair: DominatingPair, k: int) -> DominatingPair:
    """The pair (P_k, Q_k) of the sum of k reports, one from P and k − 1 from Q vs k from Q (module
    docstring); NotApplicable for pairs without a closed form here."""
    k = check_integer("k", k, minimum=1)
    if isinstance(pair, Gaussian):
        return Gaussian(pair.sigma * math.sqrt(k), pair.sensitivity)
    if isinstance(pair, FinitePair):
        p, q = pair._masses()
        if p.size == 2:
            q_k = np.array([1.0])
            for _ in range(k - 1):
                q_k = np.convolve(q_k, q)  # index = number of reports equal to outcome 1
            p_k = np.convolve(q_k, p)
            q_k = np.convolve(q_k, q)
            return DiscretePair(tuple(p_k / math.fsum(p_k)), tuple(q_k / math.fsum(q_k)))
    raise NotApplicable(f"the check-in lower bound needs a Gaussian or a two-outcome pair, not {pair!r}")


def _components(pair: DominatingPair, users: int, rate: float) -> tuple[list[tuple[float, DominatingPair]], float]:
    """[(w_k, per-k subsampled pair)] for the kept k >= 1, and the weight of the rest (k = 0 included)."""
    log_w = binomial_log_weights(users, rate)
    w = np.exp(log_w - np.max(log_w))
    w = w / math.fsum(w.tolist())
    keep = [k for k in range(1, users + 1) if w[k] >= WEIGHT_FLOOR * np.max(w)]
    kept = [(float(w[k]), PoissonSubsampled(sum_pair(pair, k), k / users)) for k in keep]
    return kept, max(0.0, 1.0 - math.fsum(c[0] for c in kept))


def checkin_lower_pld(pair: DominatingPair, users: int, rate: float, rounds: int, direction: Direction, step: float) -> DiscretePLD:
    """DOMINATED PLD of ``rounds`` rounds of the specific pair (module docstring) in ``direction``."""
    n = check_integer("users", users, minimum=1)
    t = check_integer("rounds", rounds, minimum=1)
    kept, rest = _components(pair, n, rate)
    j_lo = math.floor(LOSS_LOW / step)
    hi = 1.0
    while hi < MAX_LOSS and any(c.delta(hi, direction).upper > PROFILE_FLOOR for _, c in kept):
        hi *= 2.0
    losses = np.arange(j_lo, math.ceil(hi / step) + 1) * step
    lower = rest * np.maximum(0.0, -np.expm1(losses))
    upper = lower.copy()
    for weight, component in kept:
        bracket = component.delta(losses, direction)
        lower = lower + weight * np.asarray(bracket.lower)
        upper = upper + weight * np.asarray(bracket.upper)
    lower = np.clip(lower * (1 - 1e-12), 0.0, 1.0)  # the weighted sums are rounded: widen both ends
    upper = np.clip(upper * (1 + 1e-12) + 1e-300, 0.0, 1.0)
    one = pld_sides_from_profile(direction, step, j_lo, lower, upper, 0.0, sides=(Dominance.DOMINATED,))[0]
    return _power(one, t)


def _power(pld: DiscretePLD, times: int) -> DiscretePLD:
    result, base = None, pld
    while times:
        if times & 1:
            result = base if result is None else compose(result, base)
        times >>= 1
        if times:
            base = compose(base, base)
    return result  # type: ignore[return-value]


def checkin_delta_lower(pair: DominatingPair, users: int, rate: float, rounds: int, epsilon: float, direction: Direction, step: float = 2.0**-7) -> float:
    """LOWER bound on δ(ε) of ``rounds`` rounds of shuffled check-in (either aggregation)."""
    eps = check_real("epsilon", epsilon)
    pld = checkin_lower_pld(pair, users, rate, rounds, direction, step)
    return max(0.0, float(pld.delta(eps)) - MASS_SLACK)


def checkin_epsilon_lower(pair: DominatingPair, users: int, rate: float, rounds: int, delta: float, direction: Direction, step: float = 2.0**-7) -> float:
    """LOWER bound on ε(δ) of ``rounds`` rounds of shuffled check-in: the dominated PLD's ε at
    δ + MASS_SLACK (a point where the true δ still exceeds δ)."""
    target = check_open_unit("delta", delta)
    pld = checkin_lower_pld(pair, users, rate, rounds, direction, step)
    return float(pld.epsilon(min(target + MASS_SLACK, 1.0 - 1e-16)))


def checkin_fmt_pair(epsilon0: float, delta0: float, users: int, rate: float, delta1: float) -> tuple[DiscretePair, int]:
    """A finite pair that DOMINATES one round of shuffled check-in (either aggregation) of an
    (ε0, δ0)-DP local randomizer, and the number of k for which FMT's bound beat (ε0, δ0).

    Given k check-ins, the k shuffled reports are (ε_k, δ_k)-DP under replace-one neighbours with
    ε_k = Feldman, McMillan & Talwar 2021's clone bound at δ1 (Thm 3.2, summed in ball arithmetic,
    :func:`verifier.shuffle.clones.clone_epsilon_by_size`) and δ_k = δ1 + (e^{ε0} + 1)(1 + e^{−ε0}/2)·k·δ0
    (Thm 3.8's coupling, e^{ε0} >= e^{ε_k}; valid for the clone bound by proofs/shuffle_coupling.py, which
    proves a coupling smaller by a relative 1/(3k) at least, far more than the float64 rounding of this
    term), where that beats (ε0, δ0); (ε0, δ0) otherwise (shuffling
    is a post-processing of the k reports); subsampling k of n without replacement gives
    (ln(1 + (k/n)(e^{ε_k} − 1)), (k/n)δ_k) (Balle, Barthe & Gaboardi 2018, Thm 9 = Eq. (12)); the sum is
    a post-processing of the shuffle. Each per-k mechanism is dominated by the (ε, δ)-randomized
    response pair (:class:`verifier.pairs.ApproxDP`), k is observed, so the disjoint union with weights
    w_k dominates the round; k with w_k below FMT_WEIGHT_FLOOR·max (k = 0 included) share one
    ApproxDP(ε0, δ0) component (every per-k mechanism is (ε0, δ0)-DP; the floor is small because that
    component's δ(ε) is large for ε < ε0). Masses are float64 products (see MASS_SLACK)."""
    from verifier.pairs import ApproxDP
    from verifier.shuffle.clones import clone_epsilon_by_size

    n = check_integer("users", users, minimum=1)
    log_w = binomial_log_weights(n, rate)
    w = np.exp(log_w - np.max(log_w))
    w = w / math.fsum(w.tolist())
    ks = [k for k in range(1, n + 1) if w[k] >= FMT_WEIGHT_FLOOR * np.max(w)]
    clone = clone_epsilon_by_size(epsilon0, ks, delta1) if epsilon0 > 0 and ks else {}
    p_all: list[float] = []
    q_all: list[float] = []
    kept, improved = 0.0, 0
    for k in ks:
        eps_k, delta_k = epsilon0, delta0
        coupled = delta1 + (math.exp(epsilon0) + 1) * (1 + math.exp(-epsilon0) / 2) * k * delta0
        if clone[k] < epsilon0 and coupled < 1:
            eps_k, delta_k, improved = clone[k], math.nextafter(coupled, 2.0), improved + 1
        q_rate = k / n
        step = ApproxDP(math.log1p(q_rate * math.expm1(eps_k)), min(q_rate * delta_k, 1.0 - 1e-16))
        p, q = step._masses()
        p_all += (w[k] * p).tolist()
        q_all += (w[k] * q).tolist()
        kept += float(w[k])
    p, q = ApproxDP(epsilon0, delta0)._masses()
    rest = max(0.0, 1.0 - kept)
    p_all += (rest * p).tolist()
    q_all += (rest * q).tolist()
    return DiscretePair(tuple(np.array(p_all) / math.fsum(p_all)), tuple(np.array(q_all) / math.fsum(q_all))), improved
