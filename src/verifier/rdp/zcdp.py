"""Zero-concentrated DP: the ρ of a scheme (UPPER and LOWER bounds) and the zCDP → (ε, δ) conversions.

A mechanism is ρ-zCDP when D_α <= αρ for every α > 1 in each required direction (Bun & Steinke
2016; Steinke 2022, Def 11 and §6.4). The smallest such ρ is ρ* = sup_α D_α/α, and this module
bounds it from both sides:

- UPPER: :func:`rho_upper`, dispatched through :data:`RHO` (scheme type → ρ). Single → the pair's
  ρ from :data:`PAIR_RHO`: Gaussian Δ²/(2σ²) (Steinke 2022, Lemma 12; exact: D_α = αΔ²/(2σ²) for
  every α, Lemma 33.4), and for pure ε₀-DP pairs (Laplace with ε₀ = Δ/b, randomized response,
  ApproxDP with δ₀ = 0, a DiscretePair with a common support, ε₀ = max |ln(P/Q)|) the smaller of ε₀²/2 (Prop 16) and a rigorous evaluation of sup_α D_α/α
  (:func:`sup_renyi_ratio`: Laplace with scale 1 gives 0.36788, the KL limit, where Prop 16 says 0.5); Composed → ``times`` × the inner ρ (Thm 13: ρ adds under
  composition, adaptive or not, Prop 19); Sequence → the sum of its phases' ρ (Thm 13 again,
  heterogeneous; a phase without a known ρ leaves the sequence without one); fixed-size batches and
  Poisson sampling under replace-one → ``steps`` × the replace-one pair's ρ (joint quasi-convexity,
  Lemma 33.6: no amplification in zCDP). Another scheme type registers its own rule with
  :func:`register_rho`.
- LOWER: :func:`rho_lower_at`: D_α/α <= ρ* at any single order, from a rigorous lower bound on
  D_α dispatched through :data:`RENYI_LOWER` (Single → the pair's Rényi bracket; Composed → ``times``
  × the inner one, exact additivity for products, Lemma 33.2; Sequence → the sum of its phases'
  lower bounds, by the same additivity). A pair with D_α = +∞ (ApproxDP with
  δ₀ > 0) is not ρ-zCDP for any ρ.

Conversions (each an UPPER bound on ε(δ) or δ(ε) of a ρ-zCDP mechanism; both minimise over the
order, and every order is a rigorous bound, so the search needs no certificate of optimality):

- :attr:`Conversion.CLASSICAL`, the standard one: ε = ρ + 2√(ρ ln(1/δ)) and δ = e^{−(ε−ρ)²/(4ρ)} for
  ε >= ρ (Steinke 2022, Remark 15). It is the classical RDP conversion (Mironov 2017, Prop 3) of the
  curve α ↦ αρ at its optimal order α = 1 + √(ln(1/δ)/ρ) (resp. α − 1 = (ε − ρ)/(2ρ)), which is how
  it is evaluated here.
- :attr:`Conversion.IMPROVED`, the chapter's tight one: δ = inf_{t>0} e^{t(t+1)ρ − εt}/(t+1)·(1 − 1/(t+1))^t
  (Prop 14; notes §4.1: the log is strictly convex in t, with minimiser the root of
  (2t+1)ρ + ln(t/(t+1)) = ε). With α = t + 1 this is the improved RDP conversion (Lemma 33.8) of the
  curve α ↦ αρ, evaluated by :mod:`verifier.rdp.conversion` at the minimising order. The chapter
  notes it is "fairly tight, but not completely optimal"; it is never above the standard one.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np
from flint import arb

from verifier._directed import arb_bound, up, with_precision
from verifier._types import Bracket, Direction, Side
from verifier._validation import check_nonnegative, check_open_unit, check_order, check_real
from verifier.errors import InvalidArgument, NotApplicable
from verifier.pairs import ApproxDP, DiscretePair, DominatingPair, Gaussian, Laplace, RandomizedResponse, replace_one_pair
from verifier.rdp.conversion import Conversion, Converted, delta_upper, epsilon_upper
from verifier.rdp.curve import RdpCurve
from verifier.schemes import Composed, PoissonReplaceOne, Scheme, Sequence, Single, WithoutReplacement, ZCDP

__all__ = [
    "PAIR_RHO",
    "RHO",
    "RENYI_LOWER",
    "register_rho",
    "rho_upper",
    "renyi_lower",
    "rho_lower_at",
    "epsilon_from_rho",
    "delta_from_rho",
    "RHO_CITATION",
    "sup_renyi_ratio",
    "SUP_RTOL",
    "SUP_MAX_EVALUATIONS",
]

RHO_CITATION = "zCDP (Steinke 2022, Def 11): Gaussian rho = Delta^2/(2 sigma^2) (Lemma 12), pure eps0-DP rho <= min(eps0^2/2 (Prop 16), sup_alpha D_alpha/alpha on a grid of orders with the monotonicity remainder of van Erven & Harremoes 2014, Thm 3), composition adds rho (Thm 13)"


def _gaussian(pair: Gaussian) -> float:
    with with_precision():
        return arb_bound(arb(pair.sensitivity) ** 2 / (2 * arb(pair.sigma) ** 2), Side.UPPER)


#: The sup over orders stops refining once its upper end is within this relative gap of its lower end,
#: or after SUP_MAX_EVALUATIONS Rényi evaluations per direction (it is rigorous whenever it stops).
SUP_RTOL = 1e-4
SUP_MAX_EVALUATIONS = 400


def sup_renyi_ratio(pair: DominatingPair, max_loss: float) -> Bracket:
    """Rigorous bracket on ρ* = sup_{α>1} D_α/α over both directions, for a pair whose privacy loss
    is at most ``max_loss`` = D_∞ in absolute value (Steinke 2022, Def 11: the smallest ρ of a
    ρ-zCDP pair). Derivation (proofs/zcdp_sup.py), with K(α) = (α − 1)D_α = ln E_Q[e^{αℓ}]:

    - K is convex (a cumulant generating function; Hölder) with K(1) = 0, so on a cell [a, b] of
      orders K lies below its chord through the UPPER values K(a), K(b), and D_α/α = K(α)/(α(α − 1))
      is at most g(α) = chord(α)/(α(α − 1)), whose maximum over [a, b] is at an end or at the root of
      sα² + 2cα − c = 0 (chord = c + sα); on [1, b] this gives D_b, the value whose limit b → 1 is
      the KL divergence (where the sup of a Laplace pair is attained);
    - D_α <= D_∞ = ``max_loss`` for every α, so on [A, ∞) D_α/α <= max_loss/A;
    - every evaluated order gives the LOWER bound D_a/a <= ρ*.

    The cells are refined where the upper end is largest (branch and bound) until it is within
    SUP_RTOL of the lower end or SUP_MAX_EVALUATIONS orders were evaluated; every Rényi value is a
    ball-arithmetic bracket rounded outward, so the bracket is rigorous whenever it stops."""
    symmetric = pair.swapped() == pair
    directions = (Direction.REMOVE,) if symmetric else (Direction.REMOVE, Direction.ADD)

    def renyi(order: float) -> tuple[float, float]:
        brackets = [pair.renyi(order, d) for d in directions]
        return max(b.lower for b in brackets), max(b.upper for b in brackets)

    with with_precision():
        orders = [1.0 + 2.0**e for e in range(-24, 13, 4)]
        values = {a: renyi(a) for a in orders}
        lower = max(arb_bound(arb(values[a][0]) / a, Side.LOWER) for a in orders)
        # cells (lo, hi) of orders; hi = inf is the tail [lo, ∞)
        cells = [(1.0, orders[0])] + list(zip(orders, orders[1:])) + [(orders[-1], math.inf)]
        memo: dict[tuple[float, float], float] = {}

        def upper_of(cell: tuple[float, float]) -> float:
            if cell not in memo:
                memo[cell] = _cell_upper(cell, values, max_loss)
            return memo[cell]

        evaluations = len(orders)
        while evaluations < SUP_MAX_EVALUATIONS:
            worst = max(cells, key=upper_of)
            if upper_of(worst) <= lower * (1 + SUP_RTOL):
                break
            lo, hi = worst
            new = lo * 16.0 if math.isinf(hi) else 1.0 + math.sqrt((lo - 1.0) * (hi - 1.0)) if lo > 1.0 else 1.0 + (hi - 1.0) / 16.0
            if not lo < new < hi or new - 1.0 < 2.0**-60:
                break
            values[new] = renyi(new)
            evaluations += 1
            lower = max(lower, arb_bound(arb(values[new][0]) / new, Side.LOWER))
            cells.remove(worst)
            cells += [(lo, new), (new, hi)]
        return Bracket(lower, max(upper_of(cell) for cell in cells))


def _cell_upper(cell: tuple[float, float], values: dict[float, tuple[float, float]], max_loss: float) -> float:
    """UPPER bound on D_α/α over one cell of :func:`sup_renyi_ratio` (its docstring)."""
    lo, hi = cell
    if math.isinf(hi):
        return arb_bound(arb(max_loss) / lo, Side.UPPER)
    if lo == 1.0:
        return values[hi][1]  # chord from K(1) = 0 to K(b): g(α) = D_b/α <= D_b
    a, b = arb(lo), arb(hi)
    k_a, k_b = (a - 1) * arb(values[lo][1]), (b - 1) * arb(values[hi][1])
    slope = (k_b - k_a) / (b - a)
    c = k_a - slope * a

    def g(x: arb) -> arb:
        return (c + slope * x) / (x * (x - 1))

    candidates = [g(a), g(b)]
    if slope != 0:
        disc = c * c + slope * c
        if disc >= 0:
            for sign in (1, -1):
                root = (-c + sign * disc.sqrt()) / slope
                if root > a and root < b:
                    candidates.append(g(root))
                elif not (root <= a or root >= b):  # the ball straddles an end: clip it to the cell
                    candidates.append(g(root.intersection(a.union(b))))
    return max(arb_bound(v, Side.UPPER) for v in candidates)


def _pure(pair: DominatingPair, epsilon0: arb) -> float:
    """An ε₀-DP pair: the smaller of ε₀²/2 (Prop 16) and the upper end of :func:`sup_renyi_ratio`."""
    bound = arb_bound(epsilon0**2 / 2, Side.UPPER)
    return min(bound, sup_renyi_ratio(pair, arb_bound(epsilon0, Side.UPPER)).upper)


def _laplace(pair: Laplace) -> float:
    with with_precision():
        return _pure(pair, arb(pair.sensitivity) / arb(pair.scale))


def _randomized_response(pair: RandomizedResponse) -> float:
    with with_precision():
        return _pure(pair, arb(pair.epsilon0))


def _approx_dp(pair: ApproxDP) -> float:
    if pair.delta0 > 0:
        raise NotApplicable(f"ApproxDP with delta0={pair.delta0!r} > 0 is not zCDP (D_alpha = +inf)")
    with with_precision():
        return _pure(pair, arb(pair.epsilon0))


def _discrete(pair: DiscretePair) -> float:
    """A finite pair with P and Q on the same support is ε₀-DP with ε₀ = max |ln(P/Q)| (= D_∞ in the
    worse direction); with an outcome where one mass is 0 some D_α is +∞ and no ρ exists."""
    if any((a == 0) != (b == 0) for a, b in zip(pair.p, pair.q)):
        raise NotApplicable("a DiscretePair with an outcome of mass 0 under only one of P, Q has D_alpha = +inf: not zCDP")
    with with_precision():
        epsilon0 = max((abs((arb(a) / arb(b)).log()) for a, b in zip(pair.p, pair.q) if a > 0), default=arb(0))
        return _pure(pair, epsilon0)


#: Pair type → UPPER bound on the pair's ρ (module docstring).
PAIR_RHO: dict[type, Callable[..., float]] = {
    Gaussian: _gaussian,
    Laplace: _laplace,
    RandomizedResponse: _randomized_response,
    ApproxDP: _approx_dp,
    DiscretePair: _discrete,
}


def _single_rho(scheme: Single) -> float:
    rule = PAIR_RHO.get(type(scheme.pair))
    if rule is None:
        raise NotApplicable(f"no zCDP parameter is known for {type(scheme.pair).__name__}")
    return rule(scheme.pair)


def _composed_rho(scheme: Composed) -> float:
    with with_precision():
        return arb_bound(scheme.times * arb(rho_upper(scheme.scheme)), Side.UPPER)


def _sequence_rho(scheme: Sequence) -> float:
    """Thm 13: ρ adds under (heterogeneous) composition; NotApplicable from any phase without a ρ."""
    rhos = [rho_upper(phase) for phase in scheme.phases]
    with with_precision():
        return arb_bound(sum((arb(r) for r in rhos), arb(0)), Side.UPPER)


def _replace_one_subsampled_rho(scheme: WithoutReplacement | PoissonReplaceOne) -> float:
    """Fixed-size batches and Poisson sampling under replace-one: a step's output laws are
    λA + (1 − λ)R and λA' + (1 − λ)R with (A, A') one substitution, so by joint quasi-convexity
    (Steinke 2022, Lemma 33.6) D_α <= max{D_α(A‖A'), D_α(R‖R)} <= α·ρ of the replace-one pair:
    zCDP sees no amplification (Thm 38 needs add/remove neighbours). ``steps`` steps add (Thm 13)."""
    pair = scheme.pair if isinstance(scheme, WithoutReplacement) else replace_one_pair(scheme.pair)
    rule = PAIR_RHO.get(type(pair))
    if rule is None:
        raise NotApplicable(f"no zCDP parameter is known for {type(pair).__name__}")
    with with_precision():
        return arb_bound(scheme.steps * arb(rule(pair)), Side.UPPER)


def _zcdp_rho(scheme: ZCDP) -> float:
    """A ρ-zCDP step (ξ = 0) is ρ-zCDP by definition; with ξ > 0 no ρ alone bounds it."""
    if scheme.xi > 0.0:
        raise NotApplicable(f"a (xi, rho)-zCDP step with xi = {scheme.xi!r} > 0 is not rho-zCDP for any rho")
    return scheme.rho


#: Scheme type → UPPER bound on its ρ; extend with :func:`register_rho`.
RHO: dict[type, Callable[..., float]] = {
    Single: _single_rho,
    Composed: _composed_rho,
    Sequence: _sequence_rho,
    WithoutReplacement: _replace_one_subsampled_rho,
    PoissonReplaceOne: _replace_one_subsampled_rho,
    ZCDP: _zcdp_rho,
}


def register_rho(scheme_type: type, rule: Callable[..., float]) -> None:
    """Register ``rule(scheme) -> ρ upper bound`` for ``scheme_type`` (replacing any earlier one);
    ``rule`` raises NotApplicable where no ρ is known."""
    if not isinstance(scheme_type, type):
        raise InvalidArgument("scheme_type", scheme_type, "must be a scheme class")
    if not callable(rule):
        raise InvalidArgument("rule", rule, "must be callable")
    RHO[scheme_type] = rule


def rho_upper(scheme: Scheme) -> float:
    """An UPPER bound on the smallest ρ for which ``scheme`` is ρ-zCDP (both directions; module
    docstring), rounded up. NotApplicable where no rule is registered or the pair has none."""
    rule = RHO.get(type(scheme))
    if rule is None:
        raise NotApplicable(f"no zCDP rule is registered for {type(scheme).__name__}")
    return rule(scheme)


def _single_renyi_lower(scheme: Single, alpha: float, direction: Direction) -> float:
    return float(scheme.pair.renyi(alpha, direction).lower)


def _composed_renyi_lower(scheme: Composed, alpha: float, direction: Direction) -> float:
    inner = renyi_lower(scheme.scheme, alpha, direction)
    if math.isinf(inner):
        return inner
    with with_precision():
        return arb_bound(scheme.times * arb(inner), Side.LOWER)


def _sequence_renyi_lower(scheme: Sequence, alpha: float, direction: Direction) -> float:
    lowers = [renyi_lower(phase, alpha, direction) for phase in scheme.phases]
    if any(math.isinf(v) for v in lowers):
        return math.inf
    with with_precision():
        return arb_bound(sum((arb(v) for v in lowers), arb(0)), Side.LOWER)


def _zcdp_renyi_lower(scheme: ZCDP, alpha: float, direction: Direction) -> float:
    """The worst (ξ, ρ)-zCDP step has D_α at least that of its Gaussian member (ZCDP.stand_in)."""
    return _single_renyi_lower(Single(scheme.stand_in), alpha, direction)


#: Scheme type → rigorous LOWER bound on D_α in a direction (module docstring).
RENYI_LOWER: dict[type, Callable[..., float]] = {
    ZCDP: _zcdp_renyi_lower,
    Single: _single_renyi_lower,
    Composed: _composed_renyi_lower,
    Sequence: _sequence_renyi_lower,
}


def renyi_lower(scheme: Scheme, alpha: float, direction: Direction) -> float:
    """A rigorous LOWER bound on D_α of ``scheme`` in ``direction`` (+∞ where D_α is infinite)."""
    order = check_order("alpha", alpha)
    rule = RENYI_LOWER.get(type(scheme))
    if rule is None:
        raise NotApplicable(f"no Renyi lower bound is registered for {type(scheme).__name__}")
    return max(0.0, rule(scheme, order, direction))


def rho_lower_at(scheme: Scheme, alpha: float, direction: Direction) -> float:
    """D_α/α rounded down: a LOWER bound on the smallest ρ for which ``scheme`` is ρ-zCDP (a
    ρ-zCDP mechanism has D_α <= αρ at every order; Steinke 2022, Def 11 / §6.4)."""
    lower = renyi_lower(scheme, alpha, direction)
    if math.isinf(lower):
        return lower
    with with_precision():
        return arb_bound(arb(lower) / arb(check_order("alpha", alpha)), Side.LOWER)


def _curve(rho: float, order: float) -> RdpCurve:
    """The single-order curve D_α <= αρ of a ρ-zCDP mechanism (either direction)."""
    return RdpCurve(np.array([order]), np.array([up(order * rho)]), np.array([False]), Direction.REMOVE, RHO_CITATION)


def _check_conversion(conversion: Conversion) -> Conversion:
    if not isinstance(conversion, Conversion):
        raise InvalidArgument("conversion", conversion, "must be Conversion.CLASSICAL or Conversion.IMPROVED")
    return conversion


#: Smallest order tried (any order > 1 gives a valid bound; 1 + t rounds to 1 for t below 2^-53).
_MIN_ORDER = 1.0 + 2.0**-40

#: Orders searched by the IMPROVED ε conversion: α − 1 in [e^-40, e^12]·(1 + √(ln(1/δ)/ρ)).
_LOG_SPAN = (-40.0, 12.0)


def epsilon_from_rho(rho: float, delta: float, conversion: Conversion = Conversion.IMPROVED) -> Converted:
    """UPPER bound on ε(δ) of a ρ-zCDP mechanism by ``conversion`` (module docstring); ρ = 0 (P = Q)
    gives ε = 0."""
    r = check_nonnegative("rho", rho)
    target = check_open_unit("delta", delta)
    conv = _check_conversion(conversion)
    if r == 0.0:
        return Converted(0.0, math.inf, conv, True)
    log_inv = -math.log(target)
    scale = 1.0 + math.sqrt(log_inv / r)
    if conv is Conversion.CLASSICAL:
        order = scale
    else:

        def objective(log_t: float) -> float:
            alpha = 1.0 + math.exp(log_t)
            return alpha * r + (log_inv - math.log(alpha)) / (alpha - 1.0) + math.log1p(-1.0 / alpha)

        from scipy import optimize  # here, not at import: start-up time (issue 17)

        found = optimize.minimize_scalar(objective, bounds=(_LOG_SPAN[0] + math.log(scale), _LOG_SPAN[1] + math.log(scale)), method="bounded")
        order = 1.0 + math.exp(found.x)
    return epsilon_upper(_curve(r, max(order, _MIN_ORDER)), target, conv)


def delta_from_rho(rho: float, epsilon: float, conversion: Conversion = Conversion.IMPROVED) -> Converted:
    """UPPER bound on δ(ε) of a ρ-zCDP mechanism by ``conversion`` (module docstring); 1 where the
    conversion says nothing (ε <= ρ for the standard one); ρ = 0 (P = Q) gives δ = 0 for ε >= 0."""
    r = check_nonnegative("rho", rho)
    eps = check_real("epsilon", epsilon)
    conv = _check_conversion(conversion)
    if r == 0.0:
        return Converted(0.0 if eps >= 0 else 1.0, math.inf, conv, True)
    if conv is Conversion.CLASSICAL:
        t = (eps - r) / (2.0 * r)
    else:
        def slope(log_t: float) -> float:  # d/dt of the log objective, increasing in t (notes §4.1)
            t = math.exp(log_t)
            return (2.0 * t + 1.0) * r - math.log1p(1.0 / t) - eps

        from scipy import optimize  # here, not at import: start-up time (issue 17)

        lo, hi = -60.0, 60.0
        t = math.exp(optimize.brentq(slope, lo, hi)) if slope(lo) < 0 < slope(hi) else 1.0
    return delta_upper(_curve(r, max(1.0 + t, _MIN_ORDER) if t > 0 else 2.0), eps, conv)
