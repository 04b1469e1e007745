"""Two identities behind the convex-order random-allocation PLD (src/verifier/pld/geometric.py and
the SPREAD mode of src/fast/geometric.pyx).

1. Group split. For lattice ratios x = e^{u Delta} and y_v = e^{(u + m_v) Delta} whose sums all lie in
   the cell [x e^{(s-1) Delta}, x e^{s Delta}], the mean-preserving split of the sums puts on the
   cell's upper end the mass

       sum_v b_v (x + y_v - lo)/(hi - lo) = ((1 - E_{s-1}) W0 + W1/x) / (E_s - E_{s-1}),

   E_j = e^{j Delta}, W0 = sum_v b_v, W1 = sum_v b_v y_v: linear in the window sums (W0, W1), which
   is what lets the kernel split a whole group from two prefix-sum differences. Checked
   symbolically for a group of three atoms with free masses and positions.

2. Cell moments. The first moment of the privacy ratio X = P/Q under Q over a loss cell (a, b] is
   the P-mass of the cell: E_Q[e^L 1{a < L <= b}] = P_P(a < L <= b). Derived for the Gaussian pair
   (L ~ N(-rho, 2 rho) under Q, N(rho, 2 rho) under P, rho = Delta^2/(2 sigma^2)) from the pointwise
   identity e^l q(l) = p(l) of the loss densities: this is why the discretised base law needs only the pair's loss CDFs under P and Q.

Source: "Efficient computation of the privacy loss distribution for random allocation", Cor 3.3
(the ratio sums), notes/random-allocation.md §3.8; the split is the connect-the-dots idea of
Doroshenko et al. 2022 applied to ratios instead of losses.

Exports of :func:`derive`:

===========  ======================================================  =================================
name         expression                                              meaning
===========  ======================================================  =================================
upper_share  ((1 - E0) W0 + W1/x)/(E1 - E0)                          mass to the cell's upper end
cell_moment  Phi((b - rho)/sqrt(2 rho)) - Phi((a - rho)/sqrt(2 rho))  E_Q[X; a < L <= b], Gaussian
===========  ======================================================  =================================
"""

from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):  # run as `python proofs/allocation_convex_split.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import functools
from collections.abc import Mapping

import sympy as sp

from proofs._common import Delta, merge_claims, require_equal, sigma

__all__ = ["EXPORT_SYMBOLS", "claims", "derive"]

#: Symbols of the group split: lattice point x of the larger term, cell ends x·E0 and x·E1, three
#: atoms of the other input with masses b1..b3 at positions y1..y3.
x, E0, E1 = sp.symbols("x E0 E1", positive=True)
masses = sp.symbols("b1:4", positive=True)
positions = sp.symbols("y1:4", positive=True)
#: Loss variable and the cell (a, b_end] of the Gaussian cell moment.
ell, a_end, b_end = sp.symbols("ell a b_end", real=True)

EXPORT_SYMBOLS = {
    "upper_share": ("E0", "E1", "b1", "b2", "b3", "x", "y1", "y2", "y3"),
    "cell_moment": ("Delta", "a", "b_end", "sigma"),
}


def _normal_cdf(mean: sp.Expr, scale: sp.Expr, at: sp.Expr) -> sp.Expr:
    return (1 + sp.erf((at - mean) / (scale * sp.sqrt(2)))) / 2


def claims() -> dict[str, sp.Expr]:
    w0, w1 = sum(masses), sum(bv * yv for bv, yv in zip(masses, positions))
    rho = Delta**2 / (2 * sigma**2)
    scale = sp.sqrt(2 * rho)
    return {
        "upper_share": ((1 - E0) * w0 + w1 / x) / (E1 - E0),
        "cell_moment": _normal_cdf(rho, scale, b_end) - _normal_cdf(rho, scale, a_end),
    }


@functools.lru_cache(maxsize=None)
def _derived() -> dict[str, sp.Expr]:
    lo, hi = x * E0, x * E1
    per_atom = sum(bv * (x + yv - lo) / (hi - lo) for bv, yv in zip(masses, positions))
    rho = Delta**2 / (2 * sigma**2)
    scale = sp.sqrt(2 * rho)

    def density(mean: sp.Expr) -> sp.Expr:
        return sp.exp(-((ell - mean) ** 2) / (2 * scale**2)) / (scale * sp.sqrt(2 * sp.pi))

    # the tilted Q-density e^ℓ·q(ℓ) is the P-density pointwise, so E_Q[e^L; a < L <= b] is the
    # integral of the P-density over (a, b]: the P-CDF difference, whose b-derivative is p(b)
    require_equal(sp.exp(ell) * density(-rho), density(rho), "e^L times the Q loss density is the P loss density")
    return {"upper_share": per_atom, "cell_moment_density": density(rho).subs(ell, b_end)}


def derive(*, claimed: Mapping[str, sp.Expr] | None = None) -> dict[str, sp.Expr]:
    """Check the claims (``claimed`` replaces entries of :func:`claims`) against the derivations;
    returns the verified expressions, raises DerivationFailed."""
    claim = merge_claims(claims(), claimed)
    got = _derived()
    require_equal(got["upper_share"], claim["upper_share"], "mean-preserving split of a group of sums")
    share = claim["upper_share"]
    w0, w1 = sum(masses), sum(bv * yv for bv, yv in zip(masses, positions))
    require_equal(x * E0 * (w0 - share) + x * E1 * share, x * w0 + w1, "the split keeps the group's mean")
    points = [{Delta: 1, sigma: s, a_end: lo, b_end: hi} for s in (sp.Rational(1, 2), 1, 3)
              for lo, hi in ((-1, sp.Rational(1, 3)), (2, sp.Rational(5, 2)))]  # fmt: skip
    require_equal(sp.diff(claim["cell_moment"], b_end), got["cell_moment_density"], "d/db of the cell moment", points)
    require_equal(claim["cell_moment"].subs(b_end, a_end), 0, "an empty cell has no moment", points)
    return {name: claim[name] for name in EXPORT_SYMBOLS}


if __name__ == "__main__":
    for name, expr in derive().items():
        print(f"{name} = {expr}")
