"""RDP → (ε, δ) conversions, each an UPPER bound, with the best order chosen safely.

Classical (Mironov 2017, Prop 3; the Markov bound of Steinke 2022, §6.4):
    δ <= e^{−(α−1)(ε − D_α)},            ε = D_α + ln(1/δ)/(α − 1).
Improved (Steinke 2022, Prop 14 with t = α − 1 and Lemma 33.8; Canonne, Kamath & Steinke 2020;
Balle et al. 2020):
    δ <= e^{(α−1)(D_α − ε)}·(1/α)·(1 − 1/α)^{α−1},
    ε = D_α + ln(1 − 1/α) − (ln δ + ln α)/(α − 1).
Prop 14 holds for every ε >= 0, so an ε formula that comes out negative certifies ε = 0 (δ(ε) is
non-increasing) and is clipped there; δ is capped at 1.

Every order's value is evaluated in ball arithmetic from the curve's (upper) D_α and rounded up,
so each is a rigorous upper bound; the minimum over orders is therefore one too, and the order that
attains it is reported with it. An order whose D_α is +∞ gives the trivial bound.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass
from typing import Callable

from flint import arb

from verifier._directed import arb_bound, with_precision
from verifier._types import Side
from verifier._validation import check_open_unit, check_real
from verifier.errors import InvalidArgument
from verifier.rdp.curve import RdpCurve

__all__ = ["Conversion", "Converted", "epsilon_upper", "delta_upper"]


class Conversion(enum.Enum):
    """Which RDP → (ε, δ) conversion to apply (see the module docstring)."""

    CLASSICAL = "classical"
    IMPROVED = "improved"

    @property
    def citation(self) -> str:
        if self is Conversion.CLASSICAL:
            return "Mironov 2017, Prop 3 (RDP to (eps, delta))"
        return "Steinke 2022, Prop 14 / Lemma 33.8 (Canonne-Kamath-Steinke 2020; Balle et al. 2020)"


@dataclass(frozen=True)
class Converted:
    """An UPPER bound from an RDP curve: ``value`` (ε or δ), the ``order`` that gave it, and how."""

    value: float
    order: float
    conversion: Conversion
    exact_order: bool


def _check_conversion(conversion: Conversion) -> Conversion:
    if not isinstance(conversion, Conversion):
        raise InvalidArgument("conversion", conversion, "must be Conversion.CLASSICAL or Conversion.IMPROVED")
    return conversion


def _epsilon_at(d: float, alpha: float, delta: float, conversion: Conversion) -> float:
    if math.isinf(d):
        return math.inf
    a, dv, ln_delta = arb(alpha), arb(d), arb(delta).log()
    if conversion is Conversion.CLASSICAL:
        value = dv - ln_delta / (a - 1)
    else:
        value = dv + (1 - 1 / a).log() - (ln_delta + a.log()) / (a - 1)
    return max(0.0, arb_bound(value, Side.UPPER))


def _delta_at(d: float, alpha: float, epsilon: float, conversion: Conversion) -> float:
    if math.isinf(d) or epsilon < 0:
        return 1.0
    a = arb(alpha)
    log_value = (a - 1) * (arb(d) - arb(epsilon))
    if conversion is Conversion.IMPROVED:
        log_value += (a - 1) * (1 - 1 / a).log() - a.log()
    return min(1.0, arb_bound(log_value.exp(), Side.UPPER))


def _best(curve: RdpCurve, conversion: Conversion, at_order: Callable[[float, float], float]) -> Converted:
    """The smallest of the per-order bounds ``at_order(D_α, α)``, with the order that gives it."""
    with with_precision():
        candidates = [(at_order(float(d), float(a)), i) for i, (a, d) in enumerate(zip(curve.orders, curve.values))]
    value, i = min(candidates)
    return Converted(value, float(curve.orders[i]), conversion, bool(curve.exact[i]))


def _check_upper(curve: RdpCurve) -> None:
    """Only an UPPER curve converts: a lower bound on D_α says nothing about an upper bound on δ."""
    if curve.side is not Side.UPPER:
        raise InvalidArgument("curve", curve.citation, "is a LOWER-bound RDP curve; only UPPER curves convert to (epsilon, delta) bounds")


def epsilon_upper(curve: RdpCurve, delta: float, conversion: Conversion = Conversion.IMPROVED) -> Converted:
    """UPPER bound on ε(δ) from an RDP curve (minimum over its orders of the chosen conversion)."""
    _check_upper(curve)
    target = check_open_unit("delta", delta)
    conv = _check_conversion(conversion)
    return _best(curve, conv, lambda d, a: _epsilon_at(d, a, target, conv))


def delta_upper(curve: RdpCurve, epsilon: float, conversion: Conversion = Conversion.IMPROVED) -> Converted:
    """UPPER bound on δ(ε) from an RDP curve (minimum over its orders; 1 for ε < 0)."""
    _check_upper(curve)
    eps = check_real("epsilon", epsilon)
    conv = _check_conversion(conversion)
    return _best(curve, conv, lambda d, a: _delta_at(d, a, eps, conv))
