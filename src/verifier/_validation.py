"""Central validators for user input. Each raises :class:`~verifier.errors.InvalidArgument` naming the
parameter, its value and the allowed range, and returns the value converted to its canonical type.

Never ``assert`` on user input: use these.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Iterable

import numpy as np
import numpy.typing as npt

from verifier.errors import InvalidArgument

__all__ = [
    "check_real",
    "check_positive",
    "check_nonnegative",
    "check_open_unit",
    "check_unit",
    "check_rate",
    "check_half_open_unit",
    "check_integer",
    "check_order",
    "check_choice",
    "check_real_array",
    "check_probability_vector",
    "check_sorted",
]

#: Tolerance on Σp = 1 for user-supplied probability vectors (float64 inputs that were meant to sum to 1).
PROBABILITY_SUM_ATOL = 1e-9


def check_real(name: str, value: Any, *, allow_inf: bool = False) -> float:
    """A real number (not bool, not NaN; ±inf only if ``allow_inf``)."""
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, np.floating, np.integer)):
        raise InvalidArgument(name, value, "must be a real number")
    x = float(value)
    if math.isnan(x):
        raise InvalidArgument(name, value, "must be a real number, not NaN")
    if math.isinf(x) and not allow_inf:
        raise InvalidArgument(name, value, "must be finite")
    return x


def check_positive(name: str, value: Any) -> float:
    """A finite real number > 0."""
    x = check_real(name, value)
    if not x > 0:
        raise InvalidArgument(name, value, "must be > 0")
    return x


def check_nonnegative(name: str, value: Any) -> float:
    """A finite real number >= 0."""
    x = check_real(name, value)
    if not x >= 0:
        raise InvalidArgument(name, value, "must be >= 0")
    return x


def check_open_unit(name: str, value: Any) -> float:
    """A real number in the open interval (0, 1), e.g. a target δ."""
    x = check_real(name, value)
    if not 0.0 < x < 1.0:
        raise InvalidArgument(name, value, "must lie in the open interval (0, 1)")
    return x


def check_unit(name: str, value: Any) -> float:
    """A real number in the closed interval [0, 1], e.g. a sampling rate."""
    x = check_real(name, value)
    if not 0.0 <= x <= 1.0:
        raise InvalidArgument(name, value, "must lie in the closed interval [0, 1]")
    return x


def check_rate(name: str, value: Any) -> float:
    """A sampling probability in (0, 1]: rate 0 releases nothing, rate 1 samples every step."""
    x = check_real(name, value)
    if not 0.0 < x <= 1.0:
        raise InvalidArgument(name, value, "must lie in the interval (0, 1] (rate 0 releases nothing)")
    return x


def check_half_open_unit(name: str, value: Any) -> float:
    """A real number in the half-open interval [0, 1), e.g. the δ0 of an (ε0, δ0)-DP step."""
    x = check_real(name, value)
    if not 0.0 <= x < 1.0:
        raise InvalidArgument(name, value, "must lie in the half-open interval [0, 1)")
    return x


def check_integer(name: str, value: Any, *, minimum: int | None = None, maximum: int | None = None) -> int:
    """An integer (a float with an integral value is accepted) within [minimum, maximum]."""
    if isinstance(value, bool):
        raise InvalidArgument(name, value, "must be an integer")
    if isinstance(value, (numbers.Integral, np.integer)):
        n = int(value)
    elif isinstance(value, (numbers.Real, np.floating)) and float(value).is_integer():
        n = int(value)
    else:
        raise InvalidArgument(name, value, "must be an integer")
    if minimum is not None and n < minimum:
        raise InvalidArgument(name, value, f"must be >= {minimum}")
    if maximum is not None and n > maximum:
        raise InvalidArgument(name, value, f"must be <= {maximum}")
    return n


def check_order(name: str, value: Any) -> float:
    """A Rényi order α > 1 (finite)."""
    x = check_real(name, value)
    if not x > 1.0:
        raise InvalidArgument(name, value, "a Rényi order must be > 1")
    return x


def check_choice(name: str, value: Any, choices: Iterable[Any]) -> Any:
    """One of a fixed set of values."""
    options = tuple(choices)
    if value not in options:
        raise InvalidArgument(name, value, f"must be one of {', '.join(map(repr, options))}")
    return value


def check_real_array(name: str, values: Any, *, allow_inf: bool = False) -> npt.NDArray[np.float64]:
    """A real scalar or array, as a contiguous float64 array of at least one dimension."""
    try:
        arr = np.ascontiguousarray(np.atleast_1d(np.asarray(values, dtype=np.float64)))
    except (TypeError, ValueError):
        raise InvalidArgument(name, values, "must be a real number or an array of real numbers") from None
    if arr.ndim != 1:
        raise InvalidArgument(name, f"array of shape {arr.shape}", "must be a scalar or one-dimensional")
    if np.isnan(arr).any():
        raise InvalidArgument(name, values, "must not contain NaN")
    if not allow_inf and np.isinf(arr).any():
        raise InvalidArgument(name, values, "must be finite")
    return arr


def check_probability_vector(name: str, values: Any) -> npt.NDArray[np.float64]:
    """A one-dimensional probability vector: finite, >= 0, summing to 1 within 1e-9."""
    arr = check_real_array(name, values)
    if arr.size == 0:
        raise InvalidArgument(name, values, "must not be empty")
    if (arr < 0).any():
        raise InvalidArgument(name, values, "probabilities must be >= 0")
    total = math.fsum(arr.tolist())
    if abs(total - 1.0) > PROBABILITY_SUM_ATOL:
        raise InvalidArgument(
            name, f"vector summing to {total!r}", f"probabilities must sum to 1 (within {PROBABILITY_SUM_ATOL})"
        )
    return arr


def check_sorted(name: str, values: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """A float64 array sorted in non-decreasing order."""
    if values.size > 1 and (np.diff(values) < 0).any():
        raise InvalidArgument(name, "unsorted array", "must be sorted in non-decreasing order")
    return values
