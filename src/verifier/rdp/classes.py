"""Rényi curves of the classes known only through a Rényi bound: a (ξ, ρ)-zCDP step and
repeat-and-select (Papernot & Steinke 2022). Every value is an UPPER bound on D_α of the worst
mechanism of the class, in either direction (the curves are symmetric).

- :func:`zcdp_curve`: D_α <= ξ + ρα (Bun & Steinke 2016, Def 1.1), the supremum over the class (the
  Gaussian with Δ/σ = √(2ρ) attains ρα, Steinke 2022, Lemma 33.4), flagged exact for ξ = 0.
- :func:`sampled_zcdp_curve`: a Poisson-sampled (ξ, ρ)-zCDP step under add/remove neighbours, bounded
  by the unsampled ξ + ρα (no amplification claimed; the bound is valid because sampling never
  increases D_α). Proof, for neighbours x' = x ∪ {z} and the sample S of x (a record of x kept with
  probability q): the sampled release is P = E_S[(1 − q)M(S) + qM(S ∪ {z})] on x' and A = E_S[M(S)]
  on x. For α > 1, (P, Q) ↦ ∫P^α Q^{1−α} = exp((α − 1)D_α(P‖Q)) is jointly convex (the perspective
  of the convex t ↦ t^α, pointwise in the output, is jointly convex: Boyd & Vandenberghe 2004,
  §3.2.6; equivalently the joint convexity of the f-divergence with f(t) = t^α, Csiszár 1967; it is
  the argument of every subsampling bound on Rényi divergences). Writing A as the same
  mixture, E_S[(1 − q)M(S) + qM(S)], term by term:
  ∫P^α A^{1−α} <= E_S[(1 − q)·1 + q·exp((α − 1)D_α(M(S ∪ {z})‖M(S)))] <= exp((α − 1)(ξ + ρα)),
  and ∫A^α P^{1−α} <= E_S[(1 − q) + q·exp((α − 1)D_α(M(S)‖M(S ∪ {z})))] likewise (S and S ∪ {z}
  are neighbours, and the zCDP bound holds in both orders). Composition over the steps adds the
  curves (Mironov 2017, Prop 1; adaptive). ``tests/adapters/test_dp_event_poisson_classes.py`` checks it in mpmath.
- :func:`repeat_and_select_curve`: Papernot & Steinke 2022 ("Hyperparameter tuning with Rényi
  differential privacy", ICLR; arXiv 2110.03620), Thm 2: if one run Q is (λ, ε)-RDP and
  (λ̂, ε̂)-RDP (λ > 1, λ̂ >= 1), K ~ D_{η,γ} (Def 1: the truncated negative binomial on {1, 2, …},
  η > −1, γ ∈ (0, 1)), and A releases the best of K runs, then A is (λ, ε')-RDP with

      ε' = ε + (1 + η)(1 − 1/λ̂)ε̂ + (1 + η)ln(1/γ)/λ̂ + ln(E[K])/(λ − 1).

  The λ̂ term is minimised over :data:`SELECTION_ORDERS` and λ̂ = 1, where it is (1 + η)ln(1/γ). That
  value needs no reading of the theorem at λ̂ = 1: wherever ε(λ) is finite, D_λ̂ <= D_{1.01} < ∞ for
  λ̂ in (1, 1.01] (D is non-decreasing in the order), so (1 − 1/λ̂)ε̂ → 0 and the bounds at λ̂ → 1⁺,
  each valid, tend to it; D_λ of the release is below all of them, hence below their limit. Every
  λ̂ gives a valid bound, so the minimum is one.
  ε and ε̂ are taken as the larger of the run's two directions (RDP in the theorem bounds both
  orders of every pair of neighbours). γ is the root of E[K] = mean (E[K] = η(1 − γ)/(γ(1 − γ^η)),
  η = 0: (1/γ − 1)/ln(1/γ); Def 1 and its Eq. for the mean), bracketed from below in ball
  arithmetic (E[K] decreases in γ, so a γ whose certified mean is >= ``mean`` is <= the root, and
  ln(1/γ) is then an upper bound). RDP is non-decreasing in the order (van Erven & Harremoës 2014,
  Thm 3), so each order's value is also capped by the values at larger orders of the same call,
  as dp_accounting does.

  Poisson-distributed K (shape = ∞, K ~ Poisson(μ), μ = ``mean``; K = 0 releases ⊥): Thm 6 of the
  same paper: if Q is (λ, ε)-RDP and (ε̂, δ̂)-DP with e^ε̂ <= 1 + 1/(λ − 1), then A is (λ, ε')-RDP with

      ε' = ε + μ·δ̂ + ln(μ)/(λ − 1).

  (The statement as dp_accounting's ``_compute_rdp_repeat_and_select`` implements and cites it, "Theorem
  6 of arXiv 2110.03620v2"; the condition on ε̂ is inferred from its choice, not re-read in the paper
  here.) dp_accounting takes ε̂ = ln(1 + 1/(λ − 1)), the largest the condition allows, and δ̂ from its
  own RDP conversion. Here ε̂ is the condition's bound at λ' >= λ,
  λ' − 1 = 2^{k/64} the smallest such power (ε̂ decreases in λ, so the condition holds; the ladder lets
  each ε̂ be computed once per run: :func:`poisson_delta_hat`), rounded down, and δ̂ is verifier's
  rigorous UPPER bound on the run's δ(ε̂) from its Rényi curve (the larger of the two directions:
  (ε̂, δ̂)-DP is about both orders of every pair of neighbours).
"""

from __future__ import annotations

import functools
import math
from typing import Any, Callable

import numpy as np
import numpy.typing as npt
from flint import arb

from verifier._directed import arb_bound, with_precision
from verifier._types import Direction, Side
from verifier.errors import NotApplicable
from verifier.rdp.curve import DEFAULT_ORDERS, RdpCurve, check_orders
from verifier.schemes import RepeatAndSelect, SampledZCDP, Scheme, ZCDP

#: The run's Rényi curve, ``(run, orders, direction) -> RdpCurve`` (the accountant's ``curve_for``), and
#: an UPPER bound on its δ(ε), ``(run, epsilon, direction) -> bound with .value`` (``delta_upper_for``):
#: handed in by :mod:`verifier.rdp.accountant`, which builds these curves, so that this module does not
#: import it back.
RunCurve = Callable[[Scheme, npt.ArrayLike, Direction], RdpCurve]
RunDelta = Callable[[Scheme, float, Direction], Any]

__all__ = ["zcdp_curve", "sampled_zcdp_curve", "repeat_and_select_curve", "tnb_mean", "tnb_gamma_lower", "selection_constant", "poisson_delta_hat", "SELECTION_ORDERS", "CITATION"]

CITATION = "Papernot & Steinke 2022 (arXiv 2110.03620), Thm 2 (truncated negative binomial repetitions)"
POISSON_CITATION = "Papernot & Steinke 2022 (arXiv 2110.03620), Thm 6 (Poisson repetitions; delta-hat: the run's RDP upper bound)"
ZCDP_CITATION = "(xi, rho)-zCDP: D_alpha <= xi + rho*alpha (Bun & Steinke 2016, Def 1.1; Steinke 2022, Def 11)"

#: Orders λ̂ over which Thm 2's second term is minimised (besides λ̂ = 1): 1.01, 1.05, then steps of
#: 0.1 up to 10.9 (dp_accounting's fractional orders), where the term is smallest for small ε̂, and
#: the integer orders up to 256.
SELECTION_ORDERS: tuple[float, ...] = tuple(sorted({1.01, 1.05, *(1.0 + x / 10.0 for x in range(1, 100)), *DEFAULT_ORDERS}))


def zcdp_curve(scheme: ZCDP, orders: npt.ArrayLike, direction: Direction) -> RdpCurve:
    """ξ + ρα at each order, rounded up (exact for ξ = 0: the Gaussian stand-in attains it)."""
    grid = check_orders(orders)
    with with_precision():
        values = np.array([arb_bound(arb(scheme.xi) + arb(scheme.rho) * arb(float(a)), Side.UPPER) for a in grid])
    return RdpCurve(grid, values, np.full(len(grid), scheme.xi == 0.0), direction, ZCDP_CITATION)


SAMPLED_ZCDP_CITATION = "Poisson-sampled (xi, rho)-zCDP step: the unsampled xi + rho*alpha per step (sampling never increases D_alpha: joint convexity), composed"


def sampled_zcdp_curve(scheme: SampledZCDP, orders: npt.ArrayLike, direction: Direction) -> RdpCurve:
    """``steps`` × (ξ + ρα) (module docstring: the unsampled curve bounds the sampled step), never exact."""
    curve = zcdp_curve(scheme.step, orders, direction).times(scheme.steps)
    return RdpCurve(curve.orders, curve.values, np.zeros(len(curve.orders), dtype=bool), direction, SAMPLED_ZCDP_CITATION)


def tnb_mean(gamma: arb, shape: float) -> arb:
    """E[K] of D_{η,γ} as a ball (γ ∈ (0, 1)): η(1 − γ)/(γ(1 − γ^η)), or (1/γ − 1)/ln(1/γ) at η = 0."""
    if shape == 0.0:
        return (1 / gamma - 1) / (-gamma.log())
    eta = arb(shape)
    return eta * (1 - gamma) / (gamma * (1 - gamma**eta))


#: Bisection steps for γ (each halves the float bracket; 200 reach the float resolution at any γ).
_GAMMA_STEPS = 200


@functools.lru_cache(maxsize=64)
def tnb_gamma_lower(mean: float, shape: float) -> float:
    """A γ <= the root γ* of E[K] = ``mean`` (1.0 when ``mean`` is 1: K = 1 almost surely), by
    bisection on floats with each step's mean certified in ball arithmetic (E[K] decreases in γ)."""
    if mean == 1.0:
        return 1.0

    def above(gamma: float) -> bool:  # certified E[K] at gamma >= mean, i.e. gamma <= γ*
        with with_precision(256):
            return bool(tnb_mean(arb(gamma), shape) >= arb(mean))

    low = 1.0 / (mean + 1.0)
    while not above(low):
        low /= 2.0
    high = 1.0
    for _ in range(_GAMMA_STEPS):
        middle = 0.5 * (low + high)
        if middle in (low, high):
            break
        if above(middle):
            low = middle
        else:
            high = middle
    return low


def _both_directions(scheme, orders: npt.ArrayLike, curve_for: RunCurve) -> npt.NDArray[np.float64]:
    """The larger of the run's two UPPER curves at ``orders`` (RDP of both orders of a pair); a run
    with only LOWER curves (the shuffle model) has no Rényi bound to build on."""
    curves = [curve_for(scheme, orders, d) for d in (Direction.REMOVE, Direction.ADD)]
    if any(curve.side is not Side.UPPER for curve in curves):
        raise NotApplicable(f"the run {type(scheme).__name__} has no Renyi upper bound: repeat-and-select cannot be bounded above")
    return np.maximum(curves[0].values, curves[1].values)


def selection_constant(scheme: RepeatAndSelect, curve_for: RunCurve) -> float:
    """(1 + η)·min over λ̂ ∈ {1} ∪ :data:`SELECTION_ORDERS` of (1 − 1/λ̂)ε̂(λ̂) + ln(1/γ)/λ̂, rounded up
    (Thm 2's middle terms; γ from :func:`tnb_gamma_lower`). Cached for hashable schemes (a certify
    run asks for it at every order the conversion tries)."""
    try:
        return _cached_selection_constant(scheme, curve_for)
    except TypeError:  # an unhashable run (a matrix strategy)
        return _selection_constant(scheme, curve_for)


@functools.lru_cache(maxsize=32)
def _cached_selection_constant(scheme: RepeatAndSelect, curve_for: RunCurve) -> float:
    return _selection_constant(scheme, curve_for)


def _selection_constant(scheme: RepeatAndSelect, curve_for: RunCurve) -> float:
    gamma = tnb_gamma_lower(scheme.mean, scheme.shape)
    hat = _both_directions(scheme.scheme, SELECTION_ORDERS, curve_for)
    with with_precision():
        log_inverse = -arb(gamma).log()
        terms = [log_inverse]  # λ̂ = 1
        terms += [(1 - 1 / arb(a)) * arb(float(e)) + log_inverse / arb(a) for a, e in zip(SELECTION_ORDERS, hat) if math.isfinite(e)]
        best = min(terms, key=lambda t: arb_bound(t, Side.UPPER))
        return arb_bound((1 + arb(scheme.shape)) * best, Side.UPPER)


#: Steps per doubling of λ − 1 in the ladder of ε̂ for Poisson K (module docstring).
_LADDER = 64


def _ladder_step(order: float) -> int:
    """The least k with 2^{k/64} >= order − 1 (as floats: the ε̂ of step k is computed from that float)."""
    k = math.ceil(_LADDER * math.log2(order - 1.0))
    while 2.0 ** (k / _LADDER) < order - 1.0:
        k += 1
    return k


def poisson_delta_hat(run, order: float, curve_for: RunCurve, delta_upper_for: RunDelta) -> tuple[float, float]:
    """(ε̂, δ̂) for Thm 6 at ``order``: ε̂ = ln(1 + 1/x) rounded down, x = 2^{k/64} >= order − 1
    (so e^ε̂ <= 1 + 1/(order − 1)), and δ̂ an UPPER bound on the run's δ(ε̂) in both directions."""
    try:
        return _cached_delta_hat(run, _ladder_step(order), curve_for, delta_upper_for)
    except TypeError:  # an unhashable run (a matrix strategy)
        return _delta_hat(run, _ladder_step(order), curve_for, delta_upper_for)


@functools.lru_cache(maxsize=512)
def _cached_delta_hat(run, step: int, curve_for: RunCurve, delta_upper_for: RunDelta) -> tuple[float, float]:
    return _delta_hat(run, step, curve_for, delta_upper_for)


def _delta_hat(run, step: int, curve_for: RunCurve, delta_upper_for: RunDelta) -> tuple[float, float]:
    _both_directions(run, [2.0], curve_for)  # a run without an UPPER Rényi curve is refused here too
    with with_precision():
        epsilon_hat = arb_bound((1 + 1 / arb(2.0 ** (step / _LADDER))).log(), Side.LOWER)
    delta_hat = max(delta_upper_for(run, epsilon_hat, d).value for d in (Direction.REMOVE, Direction.ADD))
    return epsilon_hat, min(1.0, delta_hat)


def _extra_terms(scheme: RepeatAndSelect, grid, run, curve_for: RunCurve, delta_upper_for: RunDelta) -> list[arb]:
    """What Thm 2 (a constant) or Thm 6 (μ·δ̂ at each order) adds to ε(λ) + ln(μ)/(λ − 1)."""
    if not scheme.poisson:
        return [arb(selection_constant(scheme, curve_for))] * len(grid)
    return [
        arb(scheme.mean) * arb(poisson_delta_hat(scheme.scheme, float(a), curve_for, delta_upper_for)[1]) if math.isfinite(e) else arb(0)
        for a, e in zip(grid, run)
    ]


def repeat_and_select_curve(
    scheme: RepeatAndSelect, orders: npt.ArrayLike, direction: Direction, curve_for: RunCurve, delta_upper_for: RunDelta
) -> RdpCurve:
    """Thm 2's (Thm 6's for Poisson K) bound at each order (module docstring), the same in both
    directions; ``curve_for`` and ``delta_upper_for`` bound the run itself (:data:`RunCurve`)."""
    grid = check_orders(orders)
    run = _both_directions(scheme.scheme, grid, curve_for)
    with with_precision():
        extra = _extra_terms(scheme, grid, run, curve_for, delta_upper_for)
        log_mean = arb(scheme.mean).log()
        values = np.array(
            [math.inf if not math.isfinite(e) else arb_bound(arb(float(e)) + log_mean / (arb(float(a)) - 1) + c, Side.UPPER)
             for a, e, c in zip(grid, run, extra)]
        )
    values = np.minimum.accumulate(values[::-1])[::-1]  # D_α is non-decreasing in α: cap by larger orders
    return RdpCurve(grid, values, np.zeros(len(grid), dtype=bool), direction, POISSON_CITATION if scheme.poisson else CITATION)
