"""Logs of the coefficients of products and powers of positive power series, with rigorous error
bounds (the compiled kernel :mod:`verifier._fast.rdp_series`, wrapped: validation, allocation).

Each result is a pair of arrays ``(log_coeffs, errors)`` with |log_coeffs − log c_m| <= errors
(−∞ marks a zero coefficient). Slow twin: :mod:`verifier.reference.rdp` (mpmath).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from verifier._fast.rdp_series import log_series_power, log_series_product
from verifier._validation import check_integer, check_real_array
from verifier.errors import InvalidArgument, NumericalFailure

__all__ = ["log_power", "log_product"]

#: Largest t·n the kernel accepts: (t+1)·j − m must stay an exact integer in binary64.
_MAX_T_TIMES_N = 9.0e15


def _log_coefficients(name: str, values: npt.ArrayLike) -> npt.NDArray[np.float64]:
    arr = check_real_array(name, values, allow_inf=True)
    if np.any(arr == np.inf):
        raise InvalidArgument(name, "+inf", "coefficient logs must be finite or -inf (a zero coefficient)")
    return arr


def log_power(log_ta: npt.ArrayLike, t: int, length: int) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Logs of the first ``length`` coefficients of A(x)^t and their error bounds, where A's constant
    coefficient is 1 (``log_ta[0]`` must be 0) and ``log_ta[j]`` = ln(t·a_j) for j >= 1 (exact inputs,
    −∞ for a zero coefficient). The t-scaled input keeps every log in the sums O(1) for the
    allocation series (see the kernel's docstring).

    t >= n − 1 uses J.C.P. Miller's recurrence (all summands positive), smaller t binary
    exponentiation; see the kernel's docstring for the error analysis.
    """
    lta = _log_coefficients("log_ta", log_ta)
    power = check_integer("t", t, minimum=1)
    n = check_integer("length", length, minimum=1)
    if lta[0] != 0.0:
        raise InvalidArgument("log_ta[0]", float(lta[0]), "the constant coefficient must be 1 (log 0)")
    if power * n > _MAX_T_TIMES_N:
        raise InvalidArgument("t", power, f"t·length must be <= {_MAX_T_TIMES_N:g} (exact integer arithmetic)")
    out = np.empty(n)
    err = np.empty(n)
    code = log_series_power(lta, float(power), out, err, np.empty(8 * n))
    if code != 0:
        raise NumericalFailure(f"log_series_power rejected its input (code {code})")  # pragma: no cover
    return out, err


def log_product(
    log_a: npt.ArrayLike, log_b: npt.ArrayLike, length: int
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Logs of the first ``length`` coefficients of A(x)·B(x) (exact inputs) and their error bounds."""
    la = _log_coefficients("log_a", log_a)
    lb = _log_coefficients("log_b", log_b)
    n = check_integer("length", length, minimum=1)
    out = np.empty(n)
    err = np.empty(n)
    code = log_series_product(la, np.zeros_like(la), lb, np.zeros_like(lb), out, err, np.empty(2 * n))
    if code != 0:
        raise NumericalFailure(f"log_series_product rejected its input (code {code})")  # pragma: no cover
    return out, err
