"""Privacy loss and hockey-stick curves of the subsampled Gaussian mixture, in both orientations,
and the atom that glues them into the substitution pair (fixed-size batches, replace-one).

Setting: P = N(Delta, sigma^2), Q = N(0, sigma^2) (Delta the replace-one shift, 2C for records clipped
at C), lam in (0, 1) the probability that the element is in the batch, M = lam P + (1 - lam) Q.
verifier.pairs.SubstitutionSubsampled bounds a fixed-size-batch step by the profile max(delta_1,
delta_2) of the two orientations delta_1 = H(M||Q), delta_2 = H(Q||M); verifier.pld.schemes uses
one orientation as the attained LOWER bound.

Results, for every real epsilon (kappa = e^eps, a = Delta/(2 sigma)):

    loss(y) = log(M(y)/Q(y)) = log(1 - lam + lam exp((Delta y - Delta^2/2)/sigma^2))
    delta_remove(eps) = 1 - kappa                                   for kappa <= 1 - lam,
                        lam * delta_G(eps'),  eps' = log(1 + (kappa - 1)/lam)   otherwise,
    delta_add(eps)    = 1 - kappa + kappa * delta_remove(-eps),
    atom              = (1 - lam)(2 Phi(a) - 1)  >= 0,

with delta_G the Gaussian pair's curve (proofs/gaussian_hockey_stick.py). ``atom`` is the jump of
the glued profile's slope at kappa = 1 (d/dkappa of delta_remove(log kappa) at 1+ minus that of
delta_add(log kappa) at 1-), i.e. the P-mass at loss 0 of the pair whose profile is delta_remove
above eps = 0 and delta_add below: it is >= 0, so the glued profile is convex there and is a
valid privacy profile (the substitution pair exists; Dong, Roth & Su 2022, Thm 4.2's C_lam(f)).

Derivation:

1. loss: log of the ratio of the two densities, checked symbolically (with point fallback).
2. delta_remove: M - kappa Q = lam (P - kappa' Q) with kappa' = 1 + (kappa - 1)/lam, an identity of
   densities proved symbolically, so H_kappa(M||Q) = lam H_kappa'(P||Q) when kappa' > 0 (Balle,
   Barthe & Gaboardi 2018, Thm 2's computation); for kappa <= 1 - lam, M - kappa Q >= (1 - lam -
   kappa) Q >= 0 pointwise, so the supremum is the whole space: 1 - kappa. The Gaussian curve is
   proofs/gaussian_hockey_stick.py's closed form at eps' (its claims(), which that script derives
   from the definition; run_all runs it).
3. delta_add: the duality H_kappa(Q||M) = 1 - kappa + kappa H_{1/kappa}(M||Q), the closed form
   proofs/hockey_stick_duality.py proves, with H_QP := delta_remove(-eps).
4. atom: differentiate both closed forms in kappa at kappa = 1 (sympy), compare with the claim.
5. antipodal_threshold (verifier.pairs.AntipodalMixture: Poisson sampling under replace-one, the
   target's record contributing +Delta or -Delta, c = Delta/sigma): the standardised output z at
   which the loss of (lam N(c) + (1 - lam) N(0), lam N(-c) + (1 - lam) N(0)) equals eps. Clearing denominators, loss(z) = eps is a u^2 + b u - kappa a = 0 in u = e^{cz}
   with a = lam e^{-c^2/2}, b = (1 - lam)(1 - kappa); the claimed positive root is substituted back
   into log of the density ratio and checked to give eps (symbolically, points as fallback).
6. Independent numeric check of 2 and 3: the hockey-stick divergence integrated from its definition
   int (M - kappa Q)_+ dy (and (Q - kappa M)_+) with mpmath quadrature at 30 digits, at points
   (Delta, sigma, lam, eps) including eps < 0 and kappa <= 1 - lam; agreement to 1e-20.

Typos found: none.

Exports of :func:`derive` (free symbols from proofs._common, plus lam and y):

=============  ==========================================================  ==========================
name           expression                                                  free symbols
=============  ==========================================================  ==========================
loss           log(1 - lam + lam exp((Delta y - Delta^2/2)/sigma^2))       Delta, lam, sigma, y
delta_remove   Piecewise((1 - exp(eps), exp(eps) <= 1 - lam),              Delta, epsilon, lam, sigma
                 (lam delta_G(log(1 + (exp(eps) - 1)/lam)), True))
delta_add      1 - exp(eps) + exp(eps) delta_remove(-eps)                  Delta, epsilon, lam, sigma
atom           (1 - lam)(2 Phi(Delta/(2 sigma)) - 1)                       Delta, lam, sigma
antipodal_threshold  sigma/Delta * log((-b + sqrt(b^2 + 4 a^2 e^eps))/(2a)),   Delta, epsilon, lam, sigma
               a = lam exp(-Delta^2/(2 sigma^2)), b = (1 - lam)(1 - e^eps)
=============  ==========================================================  ==========================
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Mapping
from pathlib import Path

if __package__ in (None, ""):  # run as `python proofs/substitution_mixture.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import mpmath
import sympy as sp

from proofs import gaussian_hockey_stick, hockey_stick_duality
from proofs._common import (
    POINT_ATOL,
    DerivationFailed,
    Delta,
    Phi,
    epsilon,
    merge_claims,
    record_check,
    require_equal,
    sigma,
)

__all__ = ["EXPORT_SYMBOLS", "LAM", "Y", "claims", "derive"]

EXPORT_SYMBOLS = {
    "loss": ("Delta", "lam", "sigma", "y"),
    "delta_remove": ("Delta", "epsilon", "lam", "sigma"),
    "delta_add": ("Delta", "epsilon", "lam", "sigma"),
    "atom": ("Delta", "lam", "sigma"),
    "antipodal_threshold": ("Delta", "epsilon", "lam", "sigma"),
}

#: The sampling probability and the output coordinate.
LAM = sp.Symbol("lam", positive=True)
Y = sp.Symbol("y", real=True)

_KAPPA = sp.exp(epsilon)
#: Digits and tolerance of the quadrature check (step 5).
_QUAD_DIGITS = 30
_QUAD_ATOL = 1e-20


def _gaussian_delta(eps: sp.Expr) -> sp.Expr:
    return gaussian_hockey_stick.claims()["delta"].subs(epsilon, eps)


def claims() -> dict[str, sp.Expr]:
    """The closed forms stated in the module docstring."""
    remove = sp.Piecewise(
        (1 - _KAPPA, _KAPPA <= 1 - LAM),
        (LAM * _gaussian_delta(sp.log(1 + (_KAPPA - 1) / LAM)), True),
    )
    return {
        "loss": sp.log(1 - LAM + LAM * sp.exp((Delta * Y - Delta**2 / 2) / sigma**2)),
        "delta_remove": remove,
        "delta_add": 1 - _KAPPA + _KAPPA * remove.subs(epsilon, -epsilon),
        "atom": (1 - LAM) * (2 * Phi(Delta / (2 * sigma)) - 1),
        "antipodal_threshold": _antipodal_root(),
    }


def _antipodal_root() -> sp.Expr:
    """z* = log(u)/c, c = Delta/sigma, u the positive root of a u^2 + b u - kappa a (docstring, 5)."""
    c = Delta / sigma
    a = LAM * sp.exp(-(c**2) / 2)
    b = (1 - LAM) * (1 - _KAPPA)
    return sp.log((-b + sp.sqrt(b**2 + 4 * a**2 * _KAPPA)) / (2 * a)) / c


def _density(mean: sp.Expr) -> sp.Expr:
    return sp.exp(-((Y - mean) ** 2) / (2 * sigma**2)) / (sigma * sp.sqrt(2 * sp.pi))


@functools.lru_cache(maxsize=None)
def _derived() -> dict[str, sp.Expr]:
    p, q = _density(Delta), _density(0)
    m = LAM * p + (1 - LAM) * q
    kappa_prime = 1 + (_KAPPA - 1) / LAM
    # M - kappa Q = lam (P - kappa' Q): the identity behind the upper branch.
    require_equal(m - _KAPPA * q, LAM * (p - kappa_prime * q), "mixture: M - kappa Q = lam (P - kappa' Q)")
    remove = sp.Piecewise(
        (1 - _KAPPA, _KAPPA <= 1 - LAM),
        (LAM * _gaussian_delta(sp.log(kappa_prime)), True),
    )
    duality = hockey_stick_duality.claims()["duality"]
    add = duality.subs(hockey_stick_duality.H_QP, remove.subs(epsilon, -epsilon))
    return {"loss": sp.log(m / q), "delta_remove": remove, "delta_add": add}


def _require_at_points(derived: sp.Expr, claimed: sp.Expr, what: str, points: list[dict]) -> None:
    """``derived == claimed``: structurally, or else at every point to 60 digits (no symbolic
    simplification: on these Piecewise/erfc expressions it can run for minutes before failing)."""
    diff = sp.sympify(derived) - sp.sympify(claimed)
    if diff == 0:
        record_check("symbolic")
        return
    for point in points:
        value = sp.N(diff.subs(point), 60)
        if not value.is_number or value.has(sp.nan, sp.zoo, sp.oo, -sp.oo) or abs(value) > POINT_ATOL:
            raise DerivationFailed(f"{what}: derived and claimed differ at {point}: {sp.N(value, 15)}")
    record_check("points")


def _slope_jump(remove: sp.Expr, add: sp.Expr) -> sp.Expr:
    """d/dkappa delta_remove(log kappa) at kappa = 1 (from the right) minus d/dkappa delta_add(log
    kappa) at kappa = 1 (from the left): both closed forms are differentiated by sympy and the
    Piecewise conditions resolved at kappa = 1 (kappa = 1 > 1 - lam: the upper branches)."""
    kappa = sp.Symbol("kappa", positive=True)
    right = sp.diff(remove.subs(epsilon, sp.log(kappa)), kappa).subs(kappa, 1)
    left = sp.diff(add.subs(epsilon, sp.log(kappa)), kappa).subs(kappa, 1)
    return sp.piecewise_fold(right - left)


def _quadrature_check(claim: Mapping[str, sp.Expr]) -> None:
    """Step 5: both curves against int (A - kappa B)_+ dy by mpmath quadrature (split at the point
    where the integrand changes sign: the loss is increasing in y)."""
    mpmath.mp.dps = _QUAD_DIGITS
    for d, s, lam in ((1, 1, sp.Rational(1, 10)), (3, sp.Rational(3, 2), sp.Rational(1, 100))):
        dm, sm, lm = mpmath.mpf(d), mpmath.mpf(s), mpmath.mpf(lam.p) / lam.q

        def dens(y, mean):
            return mpmath.exp(-((y - mean) ** 2) / (2 * sm**2)) / (sm * mpmath.sqrt(2 * mpmath.pi))

        def mix(y):
            return lm * dens(y, dm) + (1 - lm) * dens(y, 0)

        for e in (-2, sp.Rational(-1, 20), 0, sp.Rational(1, 2), 2):
            kappa = mpmath.exp(mpmath.mpf(e.p) / e.q if isinstance(e, sp.Rational) else e)
            for name, a, b in (("delta_remove", mix, lambda y: dens(y, 0)), ("delta_add", lambda y: dens(y, 0), mix)):
                integrand = lambda y: max(mpmath.mpf(0), a(y) - kappa * b(y))  # noqa: E731
                g = lambda y: a(y) - kappa * b(y)  # noqa: E731
                cuts = [mpmath.mpf(-12) * sm, mpmath.mpf(0), dm, dm + 12 * sm]
                lo, hi = cuts[0] - 40, cuts[-1] + 40
                if (g(lo) > 0) != (g(hi) > 0):  # one sign change (the loss is monotone): split there
                    sign_lo = g(lo) > 0
                    for _ in range(120):
                        mid = (lo + hi) / 2
                        lo, hi = (mid, hi) if (g(mid) > 0) == sign_lo else (lo, mid)
                    cuts.append(lo)
                quad = mpmath.quad(integrand, [-mpmath.inf, *sorted(cuts), mpmath.inf])
                value = sp.N(claim[name].subs({Delta: d, sigma: s, LAM: lam, epsilon: e}), _QUAD_DIGITS)
                if not value.is_number or abs(float(value) - float(quad)) > _QUAD_ATOL + 1e-12 * abs(float(quad)):
                    raise DerivationFailed(
                        f"{name} at Delta={d}, sigma={s}, lam={lam}, eps={e}: closed form {value} vs quadrature {quad}"
                    )
    record_check("points")


def derive(*, claimed: Mapping[str, sp.Expr] | None = None) -> dict[str, sp.Expr]:
    """Derive the mixture's loss, both orientations' curves and the glued profile's atom, check them
    against the claims (``claimed`` replaces entries of :func:`claims`) and by quadrature.

    Returns the verified expressions (see the module docstring). Raises DerivationFailed.
    """
    claim = merge_claims(claims(), claimed)
    got = _derived()
    loss_points = [
        {Delta: d, sigma: s, LAM: lam, Y: y}
        for d in (sp.Rational(1, 2), 2)
        for s in (1, sp.Rational(3, 2))
        for lam in (sp.Rational(1, 100), sp.Rational(1, 2))
        for y in (-3, 0, sp.Rational(5, 2))
    ]
    _require_at_points(got["loss"], claim["loss"], "mixture loss", loss_points)
    points = [
        {Delta: d, sigma: s, LAM: lam, epsilon: e}
        for d in (1, 3)
        for s in (1, sp.Rational(3, 2))
        for lam in (sp.Rational(1, 10), sp.Rational(1, 2))
        for e in (-2, sp.Rational(-1, 20), sp.Rational(1, 3), 2)
    ]
    for name in ("delta_remove", "delta_add"):
        _require_at_points(got[name], claim[name], f"mixture {name}", points)
    jump = _slope_jump(claim["delta_remove"], claim["delta_add"])
    _require_at_points(jump, claim["atom"], "glued profile: slope jump at kappa = 1",
                       [{Delta: d, sigma: s, LAM: lam} for d in (1, 3) for s in (1, 2) for lam in (sp.Rational(1, 10), sp.Rational(9, 10))])
    for point in ({Delta: 1, sigma: 1, LAM: sp.Rational(1, 2)}, {Delta: 3, sigma: 2, LAM: sp.Rational(1, 100)}):
        if not sp.N(claim["atom"].subs(point), 30) >= 0:
            raise DerivationFailed(f"the atom at loss 0 is negative at {point}")
    c = Delta / sigma
    z = claim["antipodal_threshold"]
    up = 1 - LAM + LAM * sp.exp(c * z - c**2 / 2)
    down = 1 - LAM + LAM * sp.exp(-c * z - c**2 / 2)
    _require_at_points(sp.log(up / down), epsilon, "antipodal pair: the loss at the claimed threshold",
                  [{Delta: d, sigma: s, LAM: lam, epsilon: e} for d in (1, 3) for s in (1, sp.Rational(3, 2))
                   for lam in (sp.Rational(1, 10), sp.Rational(1, 2)) for e in (-2, 0, sp.Rational(1, 3), 4)])
    _quadrature_check(claim)
    return {name: claim[name] for name in EXPORT_SYMBOLS}


if __name__ == "__main__":
    for key, value in derive().items():
        print(f"{key} = {value}")
