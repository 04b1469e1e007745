"""Rényi-DP accountants: RDP curves of pairs, Poisson-subsampled pairs (integer orders exact,
fractional orders bounded), random allocation (exact remove at integer orders, add bounds), and the
RDP → (ε, δ) conversions. Every value is an UPPER bound on a Rényi divergence or on δ / ε, except
the curves of :data:`LOWER_CURVES` (the shuffle model's specific pair), marked ``side=LOWER``."""

from verifier.rdp.accountant import CURVES, LOWER_CURVES, curve_for, delta_upper_for, epsilon_upper_for, pair_curve
from verifier.rdp.allocation import (
    allocation_add_gaussian_delta,
    allocation_add_gaussian_epsilon,
    allocation_curve,
    allocation_remove_integer,
)
from verifier.rdp.conversion import Conversion, Converted, delta_upper, epsilon_upper
from verifier.rdp.curve import DEFAULT_ORDERS, RdpCurve, check_orders
from verifier.rdp.dong import dong_curve
from verifier.rdp.poisson import gaussian_remove_fractional, poisson_curve, poisson_remove_integer

__all__ = [
    "CURVES",
    "LOWER_CURVES",
    "Conversion",
    "Converted",
    "DEFAULT_ORDERS",
    "RdpCurve",
    "allocation_add_gaussian_delta",
    "allocation_add_gaussian_epsilon",
    "allocation_curve",
    "allocation_remove_integer",
    "check_orders",
    "curve_for",
    "delta_upper",
    "delta_upper_for",
    "dong_curve",
    "epsilon_upper",
    "epsilon_upper_for",
    "gaussian_remove_fractional",
    "pair_curve",
    "poisson_curve",
    "poisson_remove_integer",
]
