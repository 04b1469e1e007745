"""Hockey-stick and Renyi divergences of binary and k-ary randomized response, from the definitions.

Binary RR with parameter epsilon0: P = (e^eps0, 1)/(1 + e^eps0) on outputs (1, 0),
Q = (1, e^eps0)/(1 + e^eps0). For every real epsilon,

    delta(epsilon) = 1 - e^eps                            for eps <= -eps0,
                     (e^eps0 - e^eps)/(1 + e^eps0)        for -eps0 <= eps <= eps0,
                     0                                    for eps >= eps0,

    D_alpha(P||Q) = (1/(alpha-1)) log( (e^{alpha eps0} + e^{(1-alpha) eps0}) / (1 + e^eps0) ),

both the same for Q||P; KL(P||Q) = eps0 tanh(eps0/2).

k-ary RR (k >= 2 outputs 0..k-1, Z = e^eps0 + k - 1): P(0) = e^eps0/Z, Q(1) = e^eps0/Z, every other
mass of P and Q is 1/Z. For every real epsilon,

    delta_k(epsilon) = 1 - e^eps                                          for eps <= -eps0,
                       (e^eps0 - e^eps + (k-2)(1 - e^eps)) / Z            for -eps0 <= eps <= 0,
                       (e^eps0 - e^eps) / Z                               for 0 <= eps <= eps0,
                       0                                                  for eps >= eps0,

    D_alpha(P||Q) = (1/(alpha-1)) log( (e^{alpha eps0} + e^{(1-alpha) eps0} + k - 2) / Z ),

the same for Q||P; k = 2 gives binary RR.

Source: notes/composition-and-subsampling.md section 13 D4 (binary RR, derived there: delta for
0 <= eps' <= eps, D_alpha, E[Z] = eps tanh(eps/2)) and section 10.7 (D_2 = 0.735325664056 at
eps0 = 1); the binary formula is the k = 1, delta = 0 case of the Kairouz-Oh-Viswanath composition
formula (Steinke 2022, arXiv 2210.00597, section 7). The k-ary results are derived here.

Derivation: for a finite space, delta(eps) = sum_y (P(y) - e^eps Q(y))_+ and the y-term is positive
iff eps < log(P(y)/Q(y)) (proofs._common.discrete_hockey_stick, the definition with the maximizing
set of Prop 7); D_alpha = log(sum_y P(y)^alpha Q(y)^(1-alpha))/(alpha-1). For symbolic k the outputs
2..k-1 are one class of multiplicity k - 2 (all have P = Q = 1/Z). The Piecewise results are
compared
with the claims interval by interval between all their breakpoints (-eps0, 0, eps0), and at them;
the k-ary results are also checked by enumerating k = 2..6 outputs explicitly, and against binary RR
at k = 2. Renyi claims are compared through exp((alpha-1) D_alpha) (injective for alpha > 1).

Typos found: none. Note the notes state delta only for 0 <= eps' <= eps; the middle formula holds
on all of [-eps0, eps0] for binary RR, but NOT for k-ary RR with k >= 3 (an extra (k-2)(1-e^eps)/Z
appears for eps < 0).

Exports of :func:`derive` (free symbols from proofs._common):

============  ==============================================================  ======================
name          expression                                                      free symbols
============  ==============================================================  ======================
delta         Piecewise((1 - exp(eps), eps < -eps0),                          epsilon, epsilon0
                        ((exp(eps0) - exp(eps))/(1 + exp(eps0)), eps < eps0),
                        (0, True))                          [binary, P||Q]
delta_QP      same as delta                                                   epsilon, epsilon0
renyi         log((exp(alpha eps0) + exp((1-alpha) eps0))/(1 + exp(eps0)))    alpha, epsilon0
                / (alpha - 1)                               [binary, P||Q]
renyi_QP      same as renyi                                                   alpha, epsilon0
kl            epsilon0*tanh(epsilon0/2)                     [binary]          epsilon0
delta_k       Piecewise((1 - exp(eps), eps < -eps0),                          epsilon, epsilon0, k
                        ((exp(eps0) - exp(eps) + (k-2)(1 - exp(eps)))/Z, eps < 0),
                        ((exp(eps0) - exp(eps))/Z, eps < eps0), (0, True))
delta_k_QP    same as delta_k                                                 epsilon, epsilon0, k
renyi_k       log((exp(alpha eps0) + exp((1-alpha) eps0) + k - 2)/Z)          alpha, epsilon0, k
                / (alpha - 1),   Z = exp(eps0) + k - 1
renyi_k_QP    same as renyi_k                                                 alpha, epsilon0, k
============  ==============================================================  ======================
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Mapping
from pathlib import Path

if __package__ in (None, ""):  # run as `python proofs/randomized_response.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import sympy as sp

from proofs._common import (
    DerivationFailed,
    alpha,
    discrete_hockey_stick,
    discrete_renyi_mgf,
    epsilon,
    epsilon0,
    k,
    merge_claims,
    require_equal,
    require_piecewise_equal,
)

__all__ = ["EXPORT_SYMBOLS", "claims", "derive"]

EXPORT_SYMBOLS = {
    "delta": ("epsilon", "epsilon0"),
    "delta_QP": ("epsilon", "epsilon0"),
    "renyi": ("alpha", "epsilon0"),
    "renyi_QP": ("alpha", "epsilon0"),
    "kl": ("epsilon0",),
    "delta_k": ("epsilon", "epsilon0", "k"),
    "delta_k_QP": ("epsilon", "epsilon0", "k"),
    "renyi_k": ("alpha", "epsilon0", "k"),
    "renyi_k_QP": ("alpha", "epsilon0", "k"),
}

_E = sp.exp(epsilon0)


def claims() -> dict[str, sp.Expr]:
    """Notes D4 for binary RR (extended to every real eps), and the k-ary analogues."""
    delta = sp.Piecewise(
        (1 - sp.exp(epsilon), epsilon < -epsilon0),
        ((_E - sp.exp(epsilon)) / (1 + _E), epsilon < epsilon0),
        (0, True),
    )
    renyi = sp.log((sp.exp(alpha * epsilon0) + sp.exp((1 - alpha) * epsilon0)) / (1 + _E)) / (
        alpha - 1
    )
    z = _E + k - 1
    delta_k = sp.Piecewise(
        (1 - sp.exp(epsilon), epsilon < -epsilon0),
        ((_E - sp.exp(epsilon) + (k - 2) * (1 - sp.exp(epsilon))) / z, epsilon < 0),
        ((_E - sp.exp(epsilon)) / z, epsilon < epsilon0),
        (0, True),
    )
    renyi_k = sp.log(
        (sp.exp(alpha * epsilon0) + sp.exp((1 - alpha) * epsilon0) + k - 2) / z
    ) / (alpha - 1)
    return {
        "delta": delta,
        "delta_QP": delta,
        "renyi": renyi,
        "renyi_QP": renyi,
        "kl": epsilon0 * sp.tanh(epsilon0 / 2),
        "delta_k": delta_k,
        "delta_k_QP": delta_k,
        "renyi_k": renyi_k,
        "renyi_k_QP": renyi_k,
    }


def _binary_atoms() -> tuple[list, list]:
    """(multiplicity, P(y), Q(y)) for y = 1, 0, and the same with P and Q swapped."""
    p = {1: _E / (1 + _E), 0: 1 / (1 + _E)}
    q = {1: 1 / (1 + _E), 0: _E / (1 + _E)}
    return [(1, p[y], q[y]) for y in (1, 0)], [(1, q[y], p[y]) for y in (1, 0)]


def _kary_atoms(kk: sp.Expr) -> tuple[list, list]:
    """Outputs 0 and 1, then the class {2..k-1} of multiplicity k - 2 (P = Q = 1/Z there)."""
    z = _E + kk - 1
    atoms = [(1, _E / z, 1 / z), (1, 1 / z, _E / z), (kk - 2, 1 / z, 1 / z)]
    return atoms, [(m, q, p) for m, p, q in atoms]


def _kary_atoms_enumerated(n: int) -> tuple[list, list]:
    """k-ary RR with n outputs, listed one by one (no multiplicities)."""
    z = _E + n - 1
    p = [_E / z] + [1 / z] * (n - 1)
    q = [1 / z, _E / z] + [1 / z] * (n - 2)
    return [(1, p[i], q[i]) for i in range(n)], [(1, q[i], p[i]) for i in range(n)]


def _check_normalized(atoms: list, what: str) -> None:
    for index in (1, 2):
        total = sp.simplify(sp.Add(*[atom[0] * atom[index] for atom in atoms]))
        if total != 1:
            raise DerivationFailed(f"{what}: masses sum to {total}, not 1")


@functools.lru_cache(maxsize=None)
def _derived() -> dict[str, sp.Expr]:
    binary, binary_qp = _binary_atoms()
    kary, kary_qp = _kary_atoms(k)
    _check_normalized(binary, "binary RR")
    _check_normalized(kary, "k-ary RR")
    out = {
        "delta": discrete_hockey_stick(binary, epsilon),
        "delta_QP": discrete_hockey_stick(binary_qp, epsilon),
        "mgf": discrete_renyi_mgf(binary, alpha),
        "mgf_QP": discrete_renyi_mgf(binary_qp, alpha),
        "kl": sp.Add(*[m * p * sp.expand_log(sp.log(p / q), force=True) for m, p, q in binary]),
        "delta_k": discrete_hockey_stick(kary, epsilon),
        "delta_k_QP": discrete_hockey_stick(kary_qp, epsilon),
        "mgf_k": discrete_renyi_mgf(kary, alpha),
        "mgf_k_QP": discrete_renyi_mgf(kary_qp, alpha),
    }
    for n in range(2, 7):
        atoms, atoms_qp = _kary_atoms_enumerated(n)
        _check_normalized(atoms, f"{n}-ary RR")
        out[f"delta_{n}"] = discrete_hockey_stick(atoms, epsilon)
        out[f"delta_{n}_QP"] = discrete_hockey_stick(atoms_qp, epsilon)
        out[f"mgf_{n}"] = discrete_renyi_mgf(atoms, alpha)
    return out


def derive(*, claimed: Mapping[str, sp.Expr] | None = None) -> dict[str, sp.Expr]:
    """Derive delta(eps) (every real eps), D_alpha and KL for binary and k-ary randomized response,
    both directions; check them against the claims (``claimed`` replaces entries of
    :func:`claims`).

    Returns the verified expressions (see the module docstring). Raises DerivationFailed.
    """
    claim = merge_claims(claims(), claimed)
    got = _derived()
    e_pts = (-3, sp.Rational(-1, 4), 0, sp.Rational(1, 4), 3)
    e0_pts = (sp.Rational(1, 2), 2)
    a_pts = (sp.Rational(3, 2), 2, sp.Rational(21, 4))
    k_pts = (2, 3, 7)
    points_delta = [{epsilon: e, epsilon0: e0} for e in e_pts for e0 in e0_pts]
    points_renyi = [{alpha: a, epsilon0: e0} for a in a_pts for e0 in e0_pts]
    points_delta_k = [{**pt, k: kk} for pt in points_delta for kk in k_pts]
    points_renyi_k = [{**pt, k: kk} for pt in points_renyi for kk in k_pts]

    for name in ("delta", "delta_QP"):
        require_piecewise_equal(got[name], claim[name], epsilon, f"binary RR {name}", points_delta)
    for name in ("delta_k", "delta_k_QP"):
        require_piecewise_equal(got[name], claim[name], epsilon, f"k-ary RR {name}", points_delta_k)
    for name, mgf, pts in (
        ("renyi", "mgf", points_renyi),
        ("renyi_QP", "mgf_QP", points_renyi),
        ("renyi_k", "mgf_k", points_renyi_k),
        ("renyi_k_QP", "mgf_k_QP", points_renyi_k),
    ):
        require_equal(
            got[mgf], sp.exp((alpha - 1) * claim[name]),
            f"RR {name}: sum P^alpha Q^(1-alpha) vs exp((alpha-1) D_alpha)", pts,
        )
    require_equal(got["kl"], claim["kl"], "binary RR KL", [{epsilon0: e0} for e0 in e0_pts])
    # Explicit enumeration for k = 2..6 outputs, and k = 2 is binary RR.
    for n in range(2, 7):
        for name, mine in ((f"delta_{n}", "delta_k"), (f"delta_{n}_QP", "delta_k_QP")):
            require_piecewise_equal(
                got[name], claim[mine].subs(k, n), epsilon, f"{n}-ary RR enumerated {name}",
                points_delta,
            )
        require_equal(
            got[f"mgf_{n}"], sp.exp((alpha - 1) * claim["renyi_k"].subs(k, n)),
            f"{n}-ary RR enumerated Renyi", points_renyi,
        )
    require_piecewise_equal(claim["delta_k"].subs(k, 2), claim["delta"], epsilon,
                            "k-ary RR at k = 2 vs binary", points_delta)
    require_equal(claim["renyi_k"].subs(k, 2), claim["renyi"], "k-ary RR Renyi at k = 2 vs binary",
                  points_renyi)
    # Duality H6 on the closed forms.
    for name, qp, pts in (("delta", "delta_QP", points_delta),
                          ("delta_k", "delta_k_QP", points_delta_k)):
        dual = 1 - sp.exp(epsilon) + sp.exp(epsilon) * claim[qp].subs(epsilon, -epsilon)
        require_piecewise_equal(dual, claim[name], epsilon, f"RR duality H6 for {name}", pts)
    return {name: claim[name] for name in EXPORT_SYMBOLS}


if __name__ == "__main__":
    for key, value in derive().items():
        print(f"{key} = {value}")
