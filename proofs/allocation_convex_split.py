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

import sympy as sp

from proofs._common import Delta, require_equal, sigma


def derive() -> dict[str, sp.Expr]:
    # 1. the split of a group of three sums
    x, e_lo, e_hi = sp.symbols("x E0 E1", positive=True)
    b = sp.symbols("b1:4", positive=True)
    y = sp.symbols("y1:4", positive=True)
    lo, hi = x * e_lo, x * e_hi
    per_atom = sum(bv * (x + yv - lo) / (hi - lo) for bv, yv in zip(b, y))
    w0, w1 = sum(b), sum(bv * yv for bv, yv in zip(b, y))
    upper_share = ((1 - e_lo) * w0 + w1 / x) / (e_hi - e_lo)
    require_equal(per_atom, upper_share, "mean-preserving split of a group of sums")
    # and it preserves the group's mean: lo·(W0 − share) + hi·share = x W0 + W1
    require_equal(lo * (w0 - upper_share) + hi * upper_share, x * w0 + w1, "the split keeps the mean")

    # 2. Gaussian cell moment: E_Q[e^L; a < L <= b] = P_P(a < L <= b)
    ell, a_end, b_end = sp.symbols("ell a b_end", real=True)
    rho = Delta**2 / (2 * sigma**2)
    scale = sp.sqrt(2 * rho)

    def density(mean: sp.Expr) -> sp.Expr:
        return sp.exp(-((ell - mean) ** 2) / (2 * scale**2)) / (scale * sp.sqrt(2 * sp.pi))

    def cdf(mean: sp.Expr, at: sp.Expr) -> sp.Expr:
        return (1 + sp.erf((at - mean) / (scale * sp.sqrt(2)))) / 2

    # the tilted Q-density e^ℓ·q(ℓ) is the P-density pointwise, so integrating both over (a, b]
    # gives E_Q[e^L; a < L <= b] = P_P(a < L <= b) = Φ_P(b) − Φ_P(a)
    require_equal(sp.exp(ell) * density(-rho), density(rho), "e^L times the Q loss density is the P loss density")
    cell_moment = cdf(rho, b_end) - cdf(rho, a_end)
    require_equal(sp.diff(cell_moment, b_end), density(rho).subs(ell, b_end), "the claimed moment's derivative in b")
    return {"upper_share": upper_share, "cell_moment": cell_moment}


if __name__ == "__main__":
    for name, expr in derive().items():
        print(f"{name} = {expr}")
