"""The RDP curve type: one-sided bounds on D_α at a grid of orders, with a per-order exactness flag.

A curve holds, for each order α, a float ``value`` that is a bound on the Rényi divergence of one
direction (REMOVE: D_α(P‖Q); ADD: D_α(Q‖P) of the scheme's dominating pair) on the curve's
``side``: UPPER (the default, every accountant) or LOWER (the divergence of one specific pair of
neighbouring datasets, e.g. the shuffle-Gaussian pair of Liew et al. Thm 3, which bounds the
scheme's RDP from below). ``exact[i]`` is True when the value is the exact divergence of what the
curve describes, rounded toward its side by floating-point error only and proven within EXACT_RTOL
(1e-12) relative of it (its rigorous bracket is that narrow), False when the bracket is wider or
the value comes from an inequality (an interpolation, Thm 35, Jensen, a reduction, a monotonicity step).

Composition adds curves order by order (Steinke 2022, Lemma 31 / Lemma 33.2: exactly additive for
products, so exactness is kept); the sums are rounded toward the curve's side. Curves of different
sides refuse to combine, and only UPPER curves convert to (ε, δ) (:mod:`verifier.rdp.conversion`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import numpy.typing as npt

from verifier._directed import down, up
from verifier._types import Direction, Side
from verifier._validation import check_integer, check_real_array
from verifier.errors import IncompatibleObjects, InvalidArgument

__all__ = ["RdpCurve", "check_orders", "DEFAULT_ORDERS"]

#: Orders used when none are given: every integer 2…256 (the exact integer-order formulas of
#: Poisson subsampling and random allocation cover them; dp_accounting and Opacus use a similar range).
DEFAULT_ORDERS: tuple[float, ...] = tuple(float(a) for a in range(2, 257))


def check_orders(orders: float | Sequence[float] | npt.ArrayLike) -> npt.NDArray[np.float64]:
    """Rényi orders as a sorted float64 array without duplicates; each must be a finite real > 1."""
    arr = check_real_array("orders", orders)
    if arr.size == 0:
        raise InvalidArgument("orders", list(arr), "must contain at least one order")
    bad = arr[~(arr > 1.0)]
    if bad.size:
        raise InvalidArgument("orders", float(bad[0]), "every Rényi order must be > 1", "e.g. orders=2,3,8")
    return np.unique(arr)


@dataclass(frozen=True)
class RdpCurve:
    """Bounds on the Rényi divergence of one direction at each order, on ``side`` (see the module
    docstring).

    ``citation`` names the result the values come from (joined with " + " by composition).
    """

    orders: npt.NDArray[np.float64]
    values: npt.NDArray[np.float64]
    exact: npt.NDArray[np.bool_]
    direction: Direction
    citation: str = ""
    side: Side = Side.UPPER

    def __post_init__(self) -> None:
        orders = check_orders(self.orders)
        if orders.size != np.size(self.orders) or np.any(orders != np.asarray(self.orders, dtype=float)):
            raise InvalidArgument("orders", list(np.asarray(self.orders)), "must be sorted ascending without duplicates")
        values = check_real_array("values", self.values, allow_inf=True)
        if values.shape != orders.shape:
            raise InvalidArgument("values", f"{values.size} values", f"must match the number of orders ({orders.size})")
        if np.any(values < 0):
            bad = float(values[values < 0][0])
            raise InvalidArgument("values", bad, "a Rényi divergence is >= 0; a negative value is a defect upstream")
        exact = np.asarray(self.exact, dtype=bool)
        if exact.shape != orders.shape:
            raise InvalidArgument("exact", f"{exact.size} flags", f"must match the number of orders ({orders.size})")
        if not isinstance(self.direction, Direction):
            raise InvalidArgument("direction", self.direction, "must be Direction.ADD or Direction.REMOVE")
        if not isinstance(self.side, Side):
            raise InvalidArgument("side", self.side, "must be Side.UPPER or Side.LOWER")
        for name, arr in (("orders", orders), ("values", values), ("exact", exact)):
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)

    def compose(self, other: "RdpCurve") -> "RdpCurve":
        """The curve of the composition of the two mechanisms: values add order by order (Lemma 31)."""
        if not isinstance(other, RdpCurve):
            raise InvalidArgument("other", other, "must be an RdpCurve")
        if other.direction is not self.direction:
            raise IncompatibleObjects("direction", self.direction.value, other.direction.value)
        if other.side is not self.side:
            raise IncompatibleObjects("side", self.side.value, other.side.value)
        if self.orders.shape != other.orders.shape or np.any(self.orders != other.orders):
            raise IncompatibleObjects("orders", list(self.orders), list(other.orders))
        citation = self.citation if self.citation == other.citation else f"{self.citation} + {other.citation}"
        total = self._toward_side(self.values + other.values)
        return RdpCurve(self.orders, total, self.exact & other.exact, self.direction, citation, self.side)

    def _toward_side(self, values: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """One ulp toward the curve's side, clipped at 0 (after one rounded operation)."""
        return up(values) if self.side is Side.UPPER else np.maximum(down(values), 0.0)

    def times(self, count: int) -> "RdpCurve":
        """The curve of the ``count``-fold composition (values multiplied by ``count``, rounded toward
        the curve's side)."""
        m = check_integer("count", count, minimum=1)
        if m == 1:
            return self
        return RdpCurve(self.orders, self._toward_side(self.values * float(m)), self.exact, self.direction, self.citation, self.side)

    def __len__(self) -> int:
        return int(self.orders.size)

    def to_dict(self) -> dict:
        """JSON-ready: orders, values (nats; +∞ written as "inf"), exact flags, direction, side."""
        return {
            "orders": [float(a) for a in self.orders],
            "values": [float(v) if np.isfinite(v) else "inf" for v in self.values],
            "exact": [bool(e) for e in self.exact],
            "direction": self.direction.value,
            "citation": self.citation,
            "side": self.side.value,
        }
