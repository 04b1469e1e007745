"""Closed forms of the random-allocation remove RDP at orders 2 and 3.

Result: for 1-out-of-t random allocation of a pair with moments m_p = E_Q[(P/Q)^p] (m_1 = 1 under
absolute continuity),

    R_2(Pbar_t || Q^t) = log(1 + (m_2 - 1)/t),
    R_3(Pbar_t || Q^t) = (1/2) log(1 + ((m_3 - 1) + 3(t - 1)(m_2 - 1))/t^2),

(the second: t m_3 + 3t(t-1) m_2 + t(t-1)(t-2) - t^3 = t(m_3 - 1) + 3t(t-1)(m_2 - 1); both are
increasing in m_2 and m_3 and, written with m_p - 1 = expm1((p-1) D_p), free of cancellation at
large t, which is how src/verifier/rdp/allocation.py evaluates them in ball arithmetic),

and for the Gaussian pair (m_p = e^{p(p-1) Delta^2/(2 sigma^2)}, from gaussian_renyi's export)

    R_2 = log(1 + (e^{Delta^2/sigma^2} - 1)/t),
    R_3 = (1/2) log( (t e^{3 Delta^2/sigma^2} + 3t(t-1) e^{Delta^2/sigma^2} + t(t-1)(t-2)) / t^3 ).

Source: Feldman & Shenfeld, Thm 4.8 / Cor 4.10; notes/random-allocation.md section 5 F 28(c),(d)
(derived there), section 7.3 (reference values), notes/shuffled-check-in.md section 7 item 17 (the
same closed forms for Eq. (8)). Dong et al.'s remove bound (notes section 3.10, formula from the
authors' code) at alpha = 2, k = 1 is log((1 - 1/t) + e^{Delta^2/sigma^2}/t), checked equal here.

Derivation: R_alpha = log(S_t(alpha)/t^alpha)/(alpha - 1) with the partition sum S_t(alpha) of
proofs/allocation_partition_sum.py (verified there against the power-series coefficient); the
Gaussian moments are exp((p - 1) D_p) with D_p the verified export of proofs/gaussian_renyi.py.

Typos found: none.

Exports of :func:`derive` (free symbols: t = number of steps; m2 = second moment):

==============  =====================================================  ====================
name            expression                                             free symbols
==============  =====================================================  ====================
renyi2_general  log(1 + (m2 - 1)/t)                                    m2, t
renyi3_general  log(1 + ((m3 - 1) + 3(t-1)(m2 - 1))/t^2)/2            m2, m3, t
renyi2          log(1 + (exp(Delta**2/sigma**2) - 1)/t)                Delta, sigma, t
renyi3          log((t e^{3D} + 3t(t-1) e^{D} + t(t-1)(t-2))/t^3)/2,   Delta, sigma, t
                D = Delta**2/sigma**2
==============  =====================================================  ====================
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Mapping
from pathlib import Path

if __package__ in (None, ""):  # run as `python proofs/allocation_alpha2.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import sympy as sp

from proofs import allocation_partition_sum, gaussian_renyi
from proofs._common import Delta, alpha, merge_claims, require_equal, sigma

__all__ = ["EXPORT_SYMBOLS", "claims", "derive"]

t = allocation_partition_sum.t
m1, m2, m3 = allocation_partition_sum.moments[:3]

EXPORT_SYMBOLS = {
    "renyi2_general": ("m2", "t"),
    "renyi3_general": ("m2", "m3", "t"),
    "renyi2": ("Delta", "sigma", "t"),
    "renyi3": ("Delta", "sigma", "t"),
}


def claims() -> dict[str, sp.Expr]:
    d = Delta**2 / sigma**2
    return {
        "renyi2_general": sp.log(1 + (m2 - 1) / t),
        "renyi3_general": sp.log(1 + ((m3 - 1) + 3 * (t - 1) * (m2 - 1)) / t**2) / 2,
        "renyi2": sp.log(1 + (sp.exp(d) - 1) / t),
        "renyi3": sp.log((t * sp.exp(3 * d) + 3 * t * (t - 1) * sp.exp(d) + t * (t - 1) * (t - 2)) / t**3) / 2,
    }


@functools.lru_cache(maxsize=None)
def _derived() -> dict[str, sp.Expr]:
    gaussian_d = gaussian_renyi.derive()["renyi"]  # D_alpha(P||Q) = alpha Delta^2/(2 sigma^2), verified
    gaussian_m = {p: sp.exp((p - 1) * gaussian_d.subs(alpha, p)) for p in (2, 3)}
    s2 = allocation_partition_sum.partition_sum(2)
    s3 = allocation_partition_sum.partition_sum(3)
    gaussian = {m1: 1, m2: gaussian_m[2], m3: gaussian_m[3]}
    return {
        "renyi2_general": sp.log(s2.subs(m1, 1) / t**2),
        "renyi3_general": sp.log(s3.subs(m1, 1) / t**3) / 2,
        "renyi2": sp.log(s2.subs(gaussian) / t**2),
        "renyi3": sp.log(s3.subs(gaussian) / t**3) / 2,
    }


def derive(*, claimed: Mapping[str, sp.Expr] | None = None) -> dict[str, sp.Expr]:
    """Derive the order-2 and order-3 closed forms and check the claims (``claimed`` replaces
    entries of :func:`claims`). Returns the verified expressions; raises DerivationFailed."""
    claim = merge_claims(claims(), claimed)
    got = _derived()
    points = [{Delta: d, sigma: s, t: n, m2: mm, m3: mm**3 + 1} for d in (sp.Rational(1, 2), 1, 3)
              for s in (sp.Rational(1, 2), 2) for n in (1, 2, 7, 1000) for mm in (sp.Rational(3, 2), 40)]
    for name in EXPORT_SYMBOLS:
        # compare exp(value): the arguments of the logs are rational functions
        require_equal(sp.exp(got[name]), sp.exp(claim[name]), f"allocation {name}", points)
    dong_remove = sp.log((1 - 1 / t) + sp.exp(Delta**2 / sigma**2) / t)
    require_equal(sp.exp(dong_remove), sp.exp(claim["renyi2"]), "Dong et al. remove bound at alpha = 2, k = 1", points)
    return {name: claim[name] for name in EXPORT_SYMBOLS}


if __name__ == "__main__":
    for key, value in derive().items():
        print(f"{key} = {value}")
