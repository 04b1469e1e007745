"""The RDP curve type: upper bounds on D_α at a grid of orders, with a per-order exactness flag.

A curve holds, for each order α, a float ``value`` that is an UPPER bound on the Rényi divergence
of one direction (REMOVE: D_α(P‖Q); ADD: D_α(Q‖P) of the scheme's dominating pair), and
``exact[i]``: True when the value is the exact divergence rounded up by floating-point error only,
False when it comes from an inequality (an interpolation, Thm 35, Jensen, a reduction).

Composition adds curves order by order (Steinke 2022, Lemma 31 / Lemma 33.2: exactly additive for
products, so exactness is kept); the sums are rounded up.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import numpy.typing as npt

from verifier._directed import up
from verifier._types import Direction
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
    """UPPER bounds on the Rényi divergence of one direction at each order (see the module docstring).

    ``citation`` names the result the values come from (joined with " + " by composition).
    """

    orders: npt.NDArray[np.float64]
    values: npt.NDArray[np.float64]
    exact: npt.NDArray[np.bool_]
    direction: Direction
    citation: str = ""

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
        for name, arr in (("orders", orders), ("values", values), ("exact", exact)):
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)

    def compose(self, other: "RdpCurve") -> "RdpCurve":
        """The curve of the composition of the two mechanisms: values add order by order (Lemma 31)."""
        if not isinstance(other, RdpCurve):
            raise InvalidArgument("other", other, "must be an RdpCurve")
        if other.direction is not self.direction:
            raise IncompatibleObjects("direction", self.direction.value, other.direction.value)
        if self.orders.shape != other.orders.shape or np.any(self.orders != other.orders):
            raise IncompatibleObjects("orders", list(self.orders), list(other.orders))
        citation = self.citation if self.citation == other.citation else f"{self.citation} + {other.citation}"
        return RdpCurve(self.orders, up(self.values + other.values), self.exact & other.exact, self.direction, citation)

    def times(self, count: int) -> "RdpCurve":
        """The curve of the ``count``-fold composition (values multiplied by ``count``, rounded up)."""
        m = check_integer("count", count, minimum=1)
        if m == 1:
            return self
        return RdpCurve(self.orders, up(self.values * float(m)), self.exact, self.direction, self.citation)

    def __len__(self) -> int:
        return int(self.orders.size)

    def to_dict(self) -> dict:
        """JSON-ready: orders, values (nats; +∞ written as "inf"), exact flags, direction."""
        return {
            "orders": [float(a) for a in self.orders],
            "values": [float(v) if np.isfinite(v) else "inf" for v in self.values],
            "exact": [bool(e) for e in self.exact],
            "direction": self.direction.value,
            "citation": self.citation,
        }
