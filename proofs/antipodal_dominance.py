"""The antipodal pair dominates every replace-one step of Poisson-subsampled Gaussian noise, so its
T-fold composition is an UPPER bound for the whole run (verifier.pairs.AntipodalMixture).

Setting: Poisson sampling at rate lam in (0, 1), Gaussian noise N(0, sigma^2 I) on the sum of
records clipped to norm <= C (C is ``Delta`` below), replace-one neighbours: the target record x is
replaced by x' (|x|, |x'| <= C). Conditioned on the history and on the sum S of the other sampled
records (common to both datasets), a step is the pair

    P_{x,x'} = ((1 - lam) N(S, sigma^2 I) + lam N(S + x, sigma^2 I),
                (1 - lam) N(S, sigma^2 I) + lam N(S + x', sigma^2 I)).

Results. For every kappa >= 0, with H_kappa(P||Q) = int (p - kappa q)_+ the hockey-stick divergence,

    H_kappa(P_{x,x'}) <= H_kappa(A),   A = (lam N(C) + (1 - lam) N(0), lam N(-C) + (1 - lam) N(0))

in one dimension (noise sigma^2): A is a dominating pair of every step in the sense of Zhu, Dong
& Wang 2022 (AISTATS, "Optimal accounting of differential privacy via characteristic function":
H_kappa below A's for all kappa >= 0). By their Thm 10 (adaptive composition of dominating pairs)
the T-fold product of A is an UPPER bound for the whole run, in both directions (A is symmetric:
y -> -y swaps its two members, and the family of steps is closed under swapping x and x').

Derivation steps (the ones sympy / numpy / mpmath can check are checked by :func:`derive`):

1. Reduction to S = 0 (text). Translating both members by -S changes no divergence, and H_kappa is
   jointly convex in (P, Q); a mixture over S, with common weights, of pairs each dominated by A is
   dominated by A.
2. Reduction to |x| = |x'| = C (numpy check). The Gram matrix K of (x, x') satisfies
   K <= K' = K + diag(C^2 - |x|^2, C^2 - |x'|^2) (Loewner order); K' is the Gram matrix of two
   vectors v, v' of norm C with the same inner product (K' is PSD: |<x, x'>| <= C^2), realised in
   two extra noise coordinates if needed (common N(0) coordinates change no divergence). Define M on
   span(v, v') by M(c1 v + c2 v') = c1 x + c2 x' and M = 0 on the complement: ||M w||^2 = c^T K c
   <= c^T K' c = ||w||^2, which also makes M well defined, so ||M|| <= 1. The channel
   y -> M y + N(0, sigma^2 (I - M M^T)) maps N(v, sigma^2 I) to N(x, sigma^2 I), N(v') to N(x')
   and N(0) to N(0); by post-processing the pair with norms C dominates P_{x,x'}. Checked: for
   random (x, x') in R^3 the constructed M maps (v, v') to (x, x') and has norm <= 1.
3. Equal norms C, rho = <x, x'>/C^2 in [-1, 1] (sympy). From the densities,
   dP/dN(0, sigma^2 I)(y) = a(X) with X = <x, y>/sigma^2 and the ``likelihood_ratio``

       a(s) = 1 - lam + lam exp(s - C^2/(2 sigma^2)),

   checked symbolically in R^3 (with |x|^2 = C^2). Under N(0, sigma^2 I), (X, Y) with
   Y = <x', y>/sigma^2 is centred bivariate normal, variances tau^2 = C^2/sigma^2, covariance
   rho tau^2, so H_kappa(P||Q) = E[f(X, Y)] with f(s, t) = (a(s) - kappa a(t))_+.
4. f is submodular (sympy): f = g(a(s) - kappa a(t)) with g(u) = u_+ convex. For the softplus
   g_beta(u) = log(1 + e^{beta u})/beta (which tends to u_+ uniformly, |g_beta - u_+| <= log 2/beta)
   the ``mixed_partial`` is

       d^2/ds dt g_beta(a(s) - kappa a(t)) = -kappa g_beta''(u) a'(s) a'(t) <= 0,
       g_beta''(u) = beta e^{beta u}/(1 + e^{beta u})^2, u = a(s) - kappa a(t),

   derived by sympy from g_beta and a, and its sign decided from the symbols' assumptions (every
   factor of -mixed_partial is positive).
5. Plackett's identity (Plackett 1954, Biometrika 41, the heat-equation property of the bivariate
   normal density; sympy). For the density phi_rho of (X, Y) in step 3 the ``density_drho`` is

       d phi_rho/d rho = phi_rho (rho (1 - rho^2) + (1 + rho^2) u v - rho (u^2 + v^2))/(1 - rho^2)^2,
       u = s/tau, v = t/tau,

   and it equals tau^2 d^2 phi_rho/ds dt (both derived from phi_rho and compared with the claim).
   Integrating by parts twice (f_beta = g_beta(a(s) - kappa a(t)) and its derivatives grow at most
   like exp(|s| + |t|), Gaussian tails) gives d/d rho E f_beta = tau^2 E[d^2 f_beta/ds dt] <= 0 on
   rho in (-1, 1): E f_beta is nonincreasing in rho, and so is its uniform limit E f = H_kappa
   (beta -> oo), extended to rho = +-1 by continuity. The largest value is at rho = -1, x' = -x,
   which is A (in one dimension, along x). This is the argument of Slepian's lemma (Slepian 1962;
   Plackett 1954 for the identity): bivariate normals with fixed marginals increase in the
   supermodular order with rho (Mueller & Stoyan 2002, Comparison Methods for Stochastic Models
   and Risks, section 3.13, for the general statement).
6. Independent numeric check (mpmath, 30 digits). H_kappa(rho) is computed as E over one
   coordinate of a 1-D closed-form hockey stick (:func:`hockey_stick`): along
   e_u = (x - x')/|x - x'| and e_v = (x + x')/|x + x'|, with theta the angle (cos theta = rho), the
   v-marginal of both members is (1 - lam) N(0) + lam N(c_v), c_v = C cos(theta/2); given v, the
   u-pair is the 1-D antipodal pair with shift C sin(theta/2) and rate
   r(v) = lam phi(v - c_v)/((1 - lam) phi(v) + lam phi(v - c_v)), whose loss is increasing, so its
   hockey stick is P(Z > z*) - kappa Q(Z > z*) at the threshold z* of
   proofs/substitution_mixture.py (``antipodal_threshold``). Checked on rho in
   {1, 1/2, 0, -1/2, -9/10, -1} at (sigma, lam, kappa) in {(3/10, 1/10, 1/2), (3/10, 1/2, 3),
   (11/10, 1/100, 1), (11/10, 1/2, 1/2), (3, 1/10, 3/2), (3, 1/2, 1)} (C = 1): (a) H is nonincreasing in rho (to 1e-25); (b) at rho = -1 it
   equals the antipodal pair's hockey stick integrated from its definition int (p - kappa q)_+ dy.
   tests/proofs/test_derivations.py checks :func:`hockey_stick` against a 2-D quadrature of the
   definition.

Typos found: none.

Exports of :func:`derive` (free symbols from proofs._common, plus lam, s, t, rho, beta):

===============  =================================================================  ============================
name             expression                                                         free symbols
===============  =================================================================  ============================
likelihood_ratio 1 - lam + lam exp(s - Delta^2/(2 sigma^2))                         Delta, lam, s, sigma
mixed_partial    -exp(eps) g''(u) a'(s) a'(t), u = a(s) - exp(eps) a(t),            Delta, beta, epsilon, lam,
                 g''(u) = beta e^{beta u}/(1 + e^{beta u})^2, a = likelihood_ratio   s, sigma, t
density_drho     phi_rho(s, t) (rho (1 - rho^2) + (1 + rho^2) u v                   Delta, rho, s, sigma, t
                 - rho (u^2 + v^2))/(1 - rho^2)^2, u = s sigma/Delta, v = t sigma/Delta
===============  =================================================================  ============================
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Mapping
from pathlib import Path

if __package__ in (None, ""):  # run as `python proofs/antipodal_dominance.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import mpmath
import sympy as sp

from proofs import substitution_mixture
from proofs._common import (
    DerivationFailed,
    Delta,
    epsilon,
    merge_claims,
    record_check,
    require_equal,
    sigma,
)

__all__ = ["BETA", "EXPORT_SYMBOLS", "LAM", "RHO", "S", "T", "bivariate_density", "claims", "derive", "hockey_stick"]

EXPORT_SYMBOLS = {
    "likelihood_ratio": ("Delta", "lam", "s", "sigma"),
    "mixed_partial": ("Delta", "beta", "epsilon", "lam", "s", "sigma", "t"),
    "density_drho": ("Delta", "rho", "s", "sigma", "t"),
}

LAM = substitution_mixture.LAM
#: X = <x, y>/sigma^2 and Y = <x', y>/sigma^2 (step 3), their correlation, the softplus sharpness.
S = sp.Symbol("s", real=True)
T = sp.Symbol("t", real=True)
RHO = sp.Symbol("rho", real=True)
BETA = sp.Symbol("beta", positive=True)

_KAPPA = sp.exp(epsilon)
_TAU2 = Delta**2 / sigma**2
#: Digits of the numeric check (step 6) and its tolerances: quadrature of analytic integrands at
#: 30 digits is good to ~1e-30; 1e-25 leaves room without hiding a real increase.
_DIGITS = 30
_MONOTONE_ATOL = mpmath.mpf("1e-25")
_DEFINITION_ATOL = mpmath.mpf("1e-25")
#: (sigma, lam, kappa) of step 6 (C = 1): every sigma twice, kappa below, at and above 1.
_GRID = (("0.3", "0.1", "0.5"), ("0.3", "0.5", "3"), ("1.1", "0.01", "1"), ("1.1", "0.5", "0.5"),
         ("3", "0.1", "1.5"), ("3", "0.5", "1"))


def _a(z: sp.Expr) -> sp.Expr:
    return 1 - LAM + LAM * sp.exp(z - Delta**2 / (2 * sigma**2))


def _softplus(u: sp.Expr) -> sp.Expr:
    return sp.log(1 + sp.exp(BETA * u)) / BETA


def bivariate_density() -> sp.Expr:
    """phi_rho(s, t): centred, variances tau^2, covariance rho tau^2 (step 3)."""
    quad = (S**2 - 2 * RHO * S * T + T**2) / (_TAU2 * (1 - RHO**2))
    return sp.exp(-quad / 2) / (2 * sp.pi * _TAU2 * sp.sqrt(1 - RHO**2))


def claims() -> dict[str, sp.Expr]:
    """The closed forms stated in the module docstring."""
    u_arg = _a(S) - _KAPPA * _a(T)
    g2 = BETA * sp.exp(BETA * u_arg) / (1 + sp.exp(BETA * u_arg)) ** 2
    da = LAM * sp.exp(S - Delta**2 / (2 * sigma**2)), LAM * sp.exp(T - Delta**2 / (2 * sigma**2))
    u, v = S * sigma / Delta, T * sigma / Delta
    return {
        "likelihood_ratio": _a(S),
        "mixed_partial": -_KAPPA * g2 * da[0] * da[1],
        "density_drho": bivariate_density()
        * (RHO * (1 - RHO**2) + (1 + RHO**2) * u * v - RHO * (u**2 + v**2)) / (1 - RHO**2) ** 2,
    }


@functools.lru_cache(maxsize=None)
def _derived() -> dict[str, sp.Expr]:
    phi = bivariate_density()
    return {
        "mixed_partial": sp.diff(_softplus(_a(S) - _KAPPA * _a(T)), S, T),
        "density_drho": sp.diff(phi, RHO),
        "plackett": _TAU2 * sp.diff(phi, S, T),
    }


def _check_likelihood_ratio(claimed: sp.Expr) -> None:
    """Step 3: ((1 - lam) N(0) + lam N(x))/N(0) at y in R^3 equals the claim at s = <x, y>/sigma^2,
    |x| = Delta."""
    xs, ys = sp.symbols("x1:4", real=True), sp.symbols("y1:4", real=True)

    def density(mean: tuple[sp.Expr, ...]) -> sp.Expr:
        return sp.Mul(*[sp.exp(-((yi - mi) ** 2) / (2 * sigma**2)) / (sigma * sp.sqrt(2 * sp.pi))
                        for yi, mi in zip(ys, mean)])

    zero = (0, 0, 0)
    ratio = ((1 - LAM) * density(zero) + LAM * density(xs)) / density(zero)
    inner = sum(xi * yi for xi, yi in zip(xs, ys))
    norm = sp.sqrt(sum(xi**2 for xi in xs))
    at = claimed.subs({S: inner / sigma**2}).subs(Delta, norm)
    points = [
        {xs[0]: x1, xs[1]: x2, xs[2]: x3, ys[0]: y1, ys[1]: y2, ys[2]: y3, sigma: s_, LAM: lam}
        for (x1, x2, x3) in ((1, 0, 0), (sp.Rational(1, 2), -2, sp.Rational(3, 4)))
        for (y1, y2, y3) in ((0, 0, 0), (-1, sp.Rational(5, 2), 3))
        for s_ in (sp.Rational(3, 10), 2)
        for lam in (sp.Rational(1, 100), sp.Rational(1, 2))
    ]
    require_equal(sp.powsimp(sp.expand(ratio), combine="exp"), at,
                  "likelihood ratio of the mixture against N(0, sigma^2 I)", points)


def _check_contraction() -> None:
    """Step 2: for random (x, x') in R^3 with norms <= C, the map M with M v = x, M v' = x' (v, v'
    of norm C with the same inner product) has operator norm <= 1."""
    import numpy as np

    rng = np.random.default_rng(20221)
    c = 1.5
    for _ in range(50):
        pair = rng.normal(size=(2, 3))
        pair *= (c * rng.uniform(0.05, 1.0, size=(2, 1))) / np.linalg.norm(pair, axis=1, keepdims=True)
        gram = pair @ pair.T
        gram_c = gram + np.diag(c**2 - np.diag(gram))
        if np.linalg.eigvalsh(gram_c - gram).min() < -1e-12 or np.linalg.eigvalsh(gram_c).min() < -1e-12:
            raise DerivationFailed(f"norm reduction: K' - K or K' not PSD for {pair}")
        vs = np.linalg.cholesky(gram_c).T  # columns v, v' in R^2 with Gram K'
        m = pair.T @ np.linalg.inv(vs)  # R^2 -> R^3, M v_i = x_i
        if not np.allclose(m @ vs, pair.T, atol=1e-12) or np.linalg.norm(m, 2) > 1 + 1e-12:
            raise DerivationFailed(f"norm reduction: ||M|| = {np.linalg.norm(m, 2)} > 1 for {pair}")
    record_check("points")


def _tail(z: mpmath.mpf) -> mpmath.mpf:
    return mpmath.erfc(z / mpmath.sqrt(2)) / 2


@functools.lru_cache(maxsize=None)
def _threshold_fn():
    """substitution_mixture's verified antipodal threshold z*(Delta, sigma, lam, eps) as an mpmath
    function (standardised: sigma = 1, Delta the shift in units of sigma)."""
    expr = substitution_mixture.claims()["antipodal_threshold"].subs(sigma, 1)
    return sp.lambdify((Delta, LAM, epsilon), expr, modules="mpmath")


def _antipodal_closed_form(rate: mpmath.mpf, shift: mpmath.mpf, kappa: mpmath.mpf) -> mpmath.mpf:
    """H_kappa of (rate N(shift) + (1 - rate) N(0), rate N(-shift) + (1 - rate) N(0)), unit noise:
    P(Z > z*) - kappa Q(Z > z*) at the threshold z* (the loss is increasing in z)."""
    if rate == 0 or shift == 0:
        return max(mpmath.mpf(0), 1 - kappa)
    z = _threshold_fn()(shift, rate, mpmath.log(kappa))
    middle = (1 - rate) * _tail(z)
    return rate * _tail(z - shift) + middle - kappa * (rate * _tail(z + shift) + middle)


def hockey_stick(rho, noise, lam, kappa, norm=1) -> mpmath.mpf:
    """H_kappa(P_{x,x'}) for |x| = |x'| = ``norm``, <x, x'> = rho norm^2, noise std ``noise``, rate
    ``lam`` (step 6's v-conditional representation; mpmath at the caller's precision)."""
    rho, noise, lam, kappa = (mpmath.mpf(v) for v in (rho, noise, lam, kappa))
    if rho >= 1:
        return max(mpmath.mpf(0), 1 - kappa)
    half = mpmath.acos(rho) / 2
    c_v = mpmath.mpf(norm) * mpmath.cos(half) / noise
    shift = mpmath.mpf(norm) * mpmath.sin(half) / noise

    def phi(z):
        return mpmath.exp(-z * z / 2) / mpmath.sqrt(2 * mpmath.pi)

    def integrand(v):
        m = (1 - lam) * phi(v) + lam * phi(v - c_v)
        return m * _antipodal_closed_form(lam * phi(v - c_v) / m, shift, kappa)

    # The integrand is analytic with Gaussian tails around 0 and c_v: 13 standard deviations past
    # either leaves < 1e-37.
    return mpmath.quad(integrand, [-13, 0, c_v, c_v + 13], method="gauss-legendre")


def _antipodal_by_definition(noise, lam, kappa) -> mpmath.mpf:
    """int (p - kappa q)_+ dy for A with C = 1, split where p - kappa q changes sign (once: the
    loss is increasing), located by bisection of the loss."""
    noise, lam, kappa = (mpmath.mpf(v) for v in (noise, lam, kappa))

    def dens(y, mean):
        return mpmath.exp(-((y - mean) ** 2) / (2 * noise**2)) / (noise * mpmath.sqrt(2 * mpmath.pi))

    def g(y):
        return lam * dens(y, 1) + (1 - lam) * dens(y, 0) - kappa * (lam * dens(y, -1) + (1 - lam) * dens(y, 0))

    def loss(y):  # log p - log q - log kappa: increasing in y, no underflow far out
        p = lam * dens(y, 1) + (1 - lam) * dens(y, 0)
        return mpmath.log(p) - mpmath.log(lam * dens(y, -1) + (1 - lam) * dens(y, 0)) - mpmath.log(kappa)

    lo, hi = mpmath.mpf(-40), mpmath.mpf(40)
    if not loss(lo) < 0 < loss(hi):
        raise DerivationFailed(f"antipodal pair: no sign change of p - kappa q on [-40, 40] at {noise, lam, kappa}")
    for _ in range(130):  # bisection to ~2^-130 * 80
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if loss(mid) < 0 else (lo, mid)
    cuts = sorted([-1 - 14 * noise, 0, 1 + 14 * noise, lo])
    return mpmath.quad(lambda y: max(mpmath.mpf(0), g(y)), [-mpmath.inf, *cuts, mpmath.inf])


def _check_monotone() -> None:
    """Step 6 (a) and (b)."""
    rhos = ("1", "0.5", "0", "-0.5", "-0.9", "-1")
    with mpmath.workdps(_DIGITS):
        for noise, lam, kappa in _GRID:
            values = [hockey_stick(r, noise, lam, kappa) for r in rhos]
            for (r0, h0), (r1, h1) in zip(zip(rhos, values), zip(rhos[1:], values[1:])):
                if h1 < h0 - _MONOTONE_ATOL:
                    raise DerivationFailed(
                        f"H_kappa increases in rho: sigma={noise}, lam={lam}, kappa={kappa}: "
                        f"H({r0}) = {mpmath.nstr(h0, 20)} > H({r1}) = {mpmath.nstr(h1, 20)}")
            reference = _antipodal_by_definition(noise, lam, kappa)
            if abs(values[-1] - reference) > _DEFINITION_ATOL:
                raise DerivationFailed(
                    f"rho = -1 is not the antipodal pair: sigma={noise}, lam={lam}, kappa={kappa}: "
                    f"{mpmath.nstr(values[-1], 20)} vs the definition {mpmath.nstr(reference, 20)}")
    record_check("points")


def derive(*, claimed: Mapping[str, sp.Expr] | None = None) -> dict[str, sp.Expr]:
    """Check steps 2-6 of the module docstring against the claims (``claimed`` replaces entries of
    :func:`claims`).

    Returns the verified expressions (see the module docstring). Raises DerivationFailed.
    """
    claim = merge_claims(claims(), claimed)
    got = _derived()
    _check_contraction()
    _check_likelihood_ratio(claim["likelihood_ratio"])
    partial_points = [
        {Delta: d, sigma: s_, LAM: lam, epsilon: e, BETA: beta, S: s0, T: t0}
        for d, s_ in ((1, sp.Rational(3, 10)), (2, sp.Rational(11, 10)))
        for lam in (sp.Rational(1, 100), sp.Rational(1, 2))
        for e in (sp.Rational(-1, 2), 0, 1)
        for beta in (1, 20)
        for s0, t0 in ((0, 0), (sp.Rational(-3, 2), 2))
    ]
    require_equal(got["mixed_partial"], claim["mixed_partial"], "mixed partial of g_beta(a(s) - kappa a(t))",
                  partial_points)
    if not (-claim["mixed_partial"]).is_positive:
        raise DerivationFailed(f"the mixed partial {claim['mixed_partial']} is not provably negative")
    record_check("symbolic")
    rho_points = [
        {Delta: d, sigma: s_, RHO: r, S: s0, T: t0}
        for d, s_ in ((1, sp.Rational(3, 10)), (2, 3))
        for r in (sp.Rational(-9, 10), 0, sp.Rational(1, 2))
        for s0, t0 in ((0, 0), (sp.Rational(1, 3), -2), (3, 1))
    ]
    require_equal(got["density_drho"], claim["density_drho"], "d phi_rho / d rho", rho_points)
    require_equal(got["plackett"], claim["density_drho"], "Plackett: tau^2 d^2 phi_rho / ds dt", rho_points)
    _check_monotone()
    return {name: claim[name] for name in EXPORT_SYMBOLS}


if __name__ == "__main__":
    for key, value in derive().items():
        print(f"{key} = {value}")
