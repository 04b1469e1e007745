"""Tests of the sympy derivations in proofs/.

Three kinds of test:

* the derivations pass (``proofs.run_all`` in this process) and ``run_all`` reports failures;
* every exported expression has a deliberately wrong claim that makes its ``derive`` raise
  DerivationFailed, so a derivation that stopped checking something would be caught;
* every exported expression agrees with an independent mpmath computation (quadrature of the
  densities for continuous pairs, direct sums for discrete ones) at 30 digits. These check the
  exports, not the numeric package ``verifier``.
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Callable, Sequence
from pathlib import Path

import mpmath as mp
import numpy as np
import pytest
import sympy as sp

from proofs import _common, run_all
from proofs._common import (
    Delta,
    delta0,
    DerivationFailed,
    Phi,
    alpha,
    b,
    epsilon,
    epsilon0,
    k,
    sigma,
)

PROOFS_DIR = Path(run_all.__file__).resolve().parent

#: Working precision of the independent mpmath references (decimal digits).
DPS = 30
#: Relative tolerance against quadrature at 30 digits: tanh-sinh on smooth pieces (every kink and
#: every root of the integrand's sign change is a breakpoint) reaches ~1e-28; 1e-20 leaves room
#: for cancellation in P(S) - e^eps Q(S) without hiding any real discrepancy.
QUAD_RTOL = mp.mpf("1e-20")
#: Absolute floor for values that are (close to) zero, e.g. delta beyond eps0.
QUAD_ATOL = mp.mpf("1e-24")
#: Direct sums of a few terms are exact to working precision up to rounding.
SUM_RTOL = mp.mpf("1e-25")


def _module(name: str):
    return importlib.import_module(f"proofs.{name}")


@pytest.fixture(scope="module")
def run_results() -> list[run_all.ScriptResult]:
    """One in-process run of every derivation, shared by the tests of this module."""
    return run_all.run_all()


@pytest.fixture(scope="module")
def exports(run_results) -> dict[str, dict[str, sp.Expr]]:
    failed = [r.name for r in run_results if not r.ok]
    if failed:
        pytest.fail(f"derivations failed: {failed}")
    return {r.name: dict(r.exports) for r in run_results}


def _call(expr: sp.Expr, **values) -> mp.mpf:
    """Evaluate ``expr`` with lambdify(modules='mpmath'); ``values`` by symbol name."""
    symbols = sorted(expr.free_symbols, key=lambda s: s.name)
    missing = {s.name for s in symbols} - set(values)
    assert not missing, f"no value for {missing}"
    fn = sp.lambdify(symbols, expr, modules="mpmath")
    with mp.workdps(DPS):
        return fn(*[mp.mpf(values[s.name]) for s in symbols])


def _close(value, reference, rtol=QUAD_RTOL, atol=QUAD_ATOL) -> bool:
    return abs(value - reference) <= atol + rtol * abs(reference)


# --------------------------------------------------------------------------------------------
# Independent references (mpmath only; nothing here reads a closed form from proofs/)
# --------------------------------------------------------------------------------------------


def _sign_changes(g: Callable, lo, hi, n=400) -> list:
    """Roots of g on [lo, hi], located on a grid and refined by bisection-type root finding."""
    xs = [lo + (hi - lo) * i / n for i in range(n + 1)]
    roots = []
    for x0, x1 in zip(xs, xs[1:]):
        g0, g1 = g(x0), g(x1)
        if g0 == 0:
            roots.append(x0)
        elif g0 * g1 < 0:
            roots.append(mp.findroot(g, (x0, x1), solver="anderson"))
    return roots


def _hockey_stick_quad(logp, logq, eps, kinks: Sequence, lo, hi):
    """int max(0, p - e^eps q) dy over the real line; breakpoints at the densities' kinks and at
    every root of log p - log q - eps found on [lo, hi]."""
    eps = mp.mpf(eps)

    def f(y):
        return max(mp.mpf(0), mp.exp(logp(y)) - mp.exp(eps + logq(y)))

    roots = _sign_changes(lambda y: logp(y) - logq(y) - eps, lo, hi)
    points = sorted(set(mp.mpf(x) for x in [*kinks, *roots]))
    return mp.quad(f, [-mp.inf, *points, mp.inf])


def _q_mass_of_loss_set_quad(logp, logq, eps, kinks, lo, hi):
    """Q({y : log p(y) - log q(y) > eps}) by quadrature (d delta / d eps = -e^eps * this, D2)."""
    eps = mp.mpf(eps)

    def f(y):
        return mp.exp(logq(y)) if logp(y) - logq(y) > eps else mp.mpf(0)

    roots = _sign_changes(lambda y: logp(y) - logq(y) - eps, lo, hi)
    points = sorted(set(mp.mpf(x) for x in [*kinks, *roots]))
    return mp.quad(f, [-mp.inf, *points, mp.inf])


def _renyi_quad(logp, logq, a, kinks, grid=()):
    """D_a(P||Q) = log(int p^a q^(1-a)) / (a - 1); ``grid`` adds breakpoints where the integrand
    has its mass (for Gaussians it peaks at a * Delta, far from the kinks for large a)."""
    a = mp.mpf(a)
    points = sorted(set(mp.mpf(x) for x in [*kinks, *grid]))
    mgf = mp.quad(lambda y: mp.exp(a * logp(y) + (1 - a) * logq(y)), [-mp.inf, *points, mp.inf])
    return mp.log(mgf) / (a - 1)


def _kl_quad(logp, logq, kinks):
    return mp.quad(lambda y: mp.exp(logp(y)) * (logp(y) - logq(y)), [-mp.inf, *kinks, mp.inf])


def _gauss_log(mean, s):
    mean, s = mp.mpf(mean), mp.mpf(s)
    return lambda y: -((y - mean) ** 2) / (2 * s**2) - mp.log(s * mp.sqrt(2 * mp.pi))


def _laplace_log(mean, scale):
    mean, scale = mp.mpf(mean), mp.mpf(scale)
    return lambda y: -abs(y - mean) / scale - mp.log(2 * scale)


def _h_discrete(p: Sequence, q: Sequence, eps) -> mp.mpf:
    return mp.fsum(max(mp.mpf(0), pi - mp.exp(eps) * qi) for pi, qi in zip(p, q))


def _renyi_discrete(p: Sequence, q: Sequence, a) -> mp.mpf:
    a = mp.mpf(a)
    return mp.log(mp.fsum(pi**a * qi ** (1 - a) for pi, qi in zip(p, q))) / (a - 1)


def _rr_pmfs(e0, n: int) -> tuple[list, list]:
    """k-ary randomized response with n outputs (n = 2: binary RR, outputs (1, 0) relabelled)."""
    e = mp.exp(mp.mpf(e0))
    z = e + n - 1
    p = [e / z] + [1 / z] * (n - 1)
    q = [1 / z, e / z] + [1 / z] * (n - 2)
    return p, q


# --------------------------------------------------------------------------------------------
# run_all
# --------------------------------------------------------------------------------------------


def test_run_all_in_process_passes(run_results):
    assert [r.name for r in run_results] == list(run_all.SCRIPTS)
    failed = {r.name: r.detail for r in run_results if not r.ok}
    assert not failed, failed
    for result in run_results:
        assert result.detail.endswith("at exact points"), result.detail


def test_run_all_main_reports_success(monkeypatch, capsys):
    monkeypatch.setattr(run_all, "SCRIPTS", ("laplace_hockey_stick", "gaussian_renyi"))
    assert run_all.main() == 0
    out = capsys.readouterr().out
    assert "laplace_hockey_stick" in out and "gaussian_renyi" in out
    assert "all 2 derivations ok" in out


def test_run_all_reports_a_failing_derivation(monkeypatch, capsys):
    module = _module("gaussian_renyi")

    def broken(**_):
        raise DerivationFailed("injected failure")

    monkeypatch.setattr(module, "derive", broken)
    monkeypatch.setattr(run_all, "SCRIPTS", ("gaussian_renyi",))
    assert run_all.main() == 1
    out = capsys.readouterr().out
    assert "FAILED" in out and "injected failure" in out


def test_run_all_reports_an_unexpected_error_as_failure():
    result = run_all.run_one("no_such_derivation")
    assert not result.ok
    assert "ModuleNotFoundError" in result.detail


def test_every_script_is_run_by_run_all():
    scripts = {p.stem for p in PROOFS_DIR.glob("*.py")} - {"__init__", "_common", "run_all"}
    assert scripts == set(run_all.SCRIPTS)


def test_no_assert_statements_in_proofs():
    """`python -O` strips asserts; derivations must raise DerivationFailed instead."""
    offenders = []
    for path in PROOFS_DIR.glob("*.py"):
        tree = ast.parse(path.read_text())
        offenders += [
            f"{path.name}:{n.lineno}" for n in ast.walk(tree) if isinstance(n, ast.Assert)
        ]
    assert not offenders, offenders


@pytest.mark.parametrize("name", run_all.SCRIPTS)
def test_export_names_symbols_and_docs(name, exports):
    module = _module(name)
    got = exports[name]
    assert set(got) == set(module.EXPORT_SYMBOLS)
    for key, expr in got.items():
        assert isinstance(expr, sp.Expr)
        assert sorted(s.name for s in expr.free_symbols) == sorted(module.EXPORT_SYMBOLS[key]), key
        assert key in module.__doc__, f"export {key!r} is not documented in {name}"


def test_unknown_claim_key_is_rejected():
    with pytest.raises(KeyError, match="unknown claim"):
        _module("gaussian_renyi").derive(claimed={"renyii": alpha})


# --------------------------------------------------------------------------------------------
# Injected wrong claims must fail
# --------------------------------------------------------------------------------------------

_a, _c = Delta / (2 * sigma), epsilon * sigma / Delta
_R, _S, _T = (getattr(_module("antipodal_dominance"), name) for name in ("RHO", "S", "T"))
_E = sp.exp(epsilon0)
_Z = _E + k - 1

WRONG_CLAIMS = [
    # gaussian_renyi
    ("gaussian_renyi", "renyi", alpha**2 * Delta**2 / (2 * sigma**2)),
    ("gaussian_renyi", "renyi_QP", (alpha - 1) * Delta**2 / (2 * sigma**2)),
    ("gaussian_renyi", "kl", Delta**2 / sigma**2),
    # gaussian_hockey_stick (missing 1/2 in Delta/(2 sigma); e^-eps; derivative sign/argument)
    ("gaussian_hockey_stick", "delta",
     Phi(Delta / sigma - _c) - sp.exp(epsilon) * Phi(-Delta / sigma - _c)),
    ("gaussian_hockey_stick", "delta_QP", Phi(_a - _c) - sp.exp(-epsilon) * Phi(-_a - _c)),
    ("gaussian_hockey_stick", "ddelta", -sp.exp(epsilon) * Phi(_a - _c)),
    ("gaussian_hockey_stick", "tv", 2 * Phi(Delta / sigma) - 1),
    # laplace_renyi (coefficients swapped; the pure-DP zCDP bound; KL off by one)
    ("laplace_renyi", "renyi",
     sp.log((alpha - 1) / (2 * alpha - 1) * sp.exp((alpha - 1) * epsilon0)
            + alpha / (2 * alpha - 1) * sp.exp(-alpha * epsilon0)) / (alpha - 1)),
    ("laplace_renyi", "renyi_QP", alpha * epsilon0**2 / 2),
    ("laplace_renyi", "kl", epsilon0 + sp.exp(-epsilon0)),
    # laplace_hockey_stick (the naive eps < 0 extension; no lower branch; wrong TV)
    ("laplace_hockey_stick", "delta",
     sp.Piecewise((1 - sp.exp(epsilon), epsilon < 0),
                  (1 - sp.exp((epsilon - epsilon0) / 2), epsilon < epsilon0), (0, True))),
    ("laplace_hockey_stick", "delta_QP",
     sp.Piecewise((1 - sp.exp((epsilon - epsilon0) / 2), epsilon < epsilon0), (0, True))),
    ("laplace_hockey_stick", "tv", 1 - sp.exp(-epsilon0)),
    # randomized_response
    ("randomized_response", "delta",
     sp.Piecewise(((_E - sp.exp(epsilon)) / (1 + _E), epsilon < epsilon0), (0, True))),
    ("randomized_response", "delta_QP",
     sp.Piecewise((1 - sp.exp(epsilon), epsilon < -epsilon0),
                  ((_E - sp.exp(epsilon)) / (_E - 1), epsilon < epsilon0), (0, True))),
    ("randomized_response", "renyi",
     sp.log(sp.exp(alpha * epsilon0) + sp.exp((1 - alpha) * epsilon0)) / (alpha - 1)),
    ("randomized_response", "renyi_QP",
     sp.log((sp.exp(alpha * epsilon0) + sp.exp((alpha - 1) * epsilon0)) / (1 + _E)) / (alpha - 1)),
    ("randomized_response", "kl", epsilon0 * sp.tanh(epsilon0)),
    ("randomized_response", "delta_k",
     sp.Piecewise((1 - sp.exp(epsilon), epsilon < -epsilon0),
                  ((_E - sp.exp(epsilon) + (k - 1) * (1 - sp.exp(epsilon))) / _Z, epsilon < 0),
                  ((_E - sp.exp(epsilon)) / _Z, epsilon < epsilon0), (0, True))),
    ("randomized_response", "delta_k_QP",
     sp.Piecewise((1 - sp.exp(epsilon), epsilon < -epsilon0),
                  ((_E - sp.exp(epsilon)) / (_E + k), epsilon < epsilon0), (0, True))),
    ("randomized_response", "renyi_k",
     sp.log((sp.exp(alpha * epsilon0) + sp.exp((1 - alpha) * epsilon0) + k - 1) / _Z)
     / (alpha - 1)),
    ("randomized_response", "renyi_k_QP",
     sp.log((sp.exp(alpha * epsilon0) + sp.exp((1 - alpha) * epsilon0)) / (1 + _E)) / (alpha - 1)),
    # hockey_stick_duality
    ("hockey_stick_duality", "duality",
     1 - sp.exp(epsilon) + _module("hockey_stick_duality").H_QP),
    ("hockey_stick_duality", "delta_3pt", _module("hockey_stick_duality").claims()["delta_3pt_QP"]),
    ("hockey_stick_duality", "delta_3pt_QP",
     _module("hockey_stick_duality").claims()["delta_3pt_QP"].subs(epsilon, -epsilon)),
    # allocation_partition_sum / allocation_alpha2 (issue 6): multiplicity weight dropped, t^2 for
    # the falling factorial, Poisson-style 1/t^2, halved exponent, wrong 1/(alpha - 1)
    ("allocation_partition_sum", "coefficient_3", _module("allocation_partition_sum").claims()["coefficient_3"]
     .subs(sp.Symbol("m2", positive=True), 1)),
    ("allocation_partition_sum", "coefficient_4", _module("allocation_partition_sum").claims()["coefficient_4"]
     .subs(sp.Symbol("t", positive=True, integer=True) - 3, sp.Symbol("t", positive=True, integer=True))),
    ("allocation_alpha2", "renyi2_general",
     sp.log(1 + (sp.Symbol("m2", positive=True) - 1) / sp.Symbol("t", positive=True, integer=True) ** 2)),
    ("allocation_alpha2", "renyi2",
     sp.log(1 + (sp.exp(Delta**2 / (2 * sigma**2)) - 1) / sp.Symbol("t", positive=True, integer=True))),
    ("allocation_alpha2", "renyi3", 2 * _module("allocation_alpha2").claims()["renyi3"]),
    # issue 30: 3t(m2 - 1) for 3(t - 1)(m2 - 1) (the m1^3 term's t(t-1)(t-2) folded in wrongly)
    ("allocation_alpha2", "renyi3_general",
     sp.log(1 + ((sp.Symbol("m3", positive=True) - 1) + 3 * sp.Symbol("t", positive=True, integer=True)
                 * (sp.Symbol("m2", positive=True) - 1)) / sp.Symbol("t", positive=True, integer=True) ** 2) / 2),
    # allocation_convex_split (issue 5): the split measured from the wrong lattice point; the cell
    # moment read from the Q loss law instead of the P loss law
    ("allocation_convex_split", "upper_share",
     _module("allocation_convex_split").claims()["upper_share"].subs(sp.Symbol("x", positive=True), 1)),
    ("allocation_convex_split", "cell_moment",
     _module("allocation_convex_split").claims()["cell_moment"].subs(Delta**2 / (2 * sigma**2), -Delta**2 / (2 * sigma**2))),
    # approx_dp (issue 13): the delta0 mass left out below -eps0; (1 - delta0) dropped from the RR
    # part; the TV of plain RR
    ("approx_dp", "delta",
     sp.Piecewise((1 - sp.exp(epsilon), epsilon < -epsilon0),
                  (delta0 + (1 - delta0) * (_E - sp.exp(epsilon)) / (1 + _E), epsilon < epsilon0),
                  (delta0, True))),
    ("approx_dp", "delta_QP",
     sp.Piecewise((1 - (1 - delta0) * sp.exp(epsilon), epsilon < -epsilon0),
                  (delta0 + (_E - sp.exp(epsilon)) / (1 + _E), epsilon < epsilon0), (delta0, True))),
    ("approx_dp", "tv", (_E - 1) / (_E + 1)),
    # allocation_theorem_constants (issue 19): the printed statements (cosh in Thm 4.1, 2 tau in
    # Thm 4.2, Kasiviswanathan-Smith's factor 2 in the tail) are not what the derivation gives
    ("allocation_theorem_constants", "gamma",
     sp.cosh(epsilon0) * sp.sqrt(2 * sp.log(1 / _module("allocation_theorem_constants").delta_az) / _module("allocation_theorem_constants").t)),
    ("allocation_theorem_constants", "tail",
     2 * _module("allocation_theorem_constants").H / (1 - sp.exp(-_module("allocation_theorem_constants").x))),
    ("allocation_theorem_constants", "tau", 2 * _module("allocation_theorem_constants").claims()["tau"]),
    ("allocation_theorem_constants", "tau_add", 2 * _module("allocation_theorem_constants").claims()["tau_add"]),
    # allocation_add_taylor (issue 17): the Gaussian moments at order 1 instead of 2 / without the
    # c^2 term; Hoeffding's 2 in place of Maurer's 1/(2 M2); the remainder without s0^(-m-2)
    ("allocation_add_taylor", "second_moment", sp.exp(Delta**2 / (2 * sigma**2))),
    ("allocation_add_taylor", "negative_moment", sp.exp(sp.Symbol("c", positive=True) * Delta**2 / (2 * sigma**2))),
    ("allocation_add_taylor", "maurer_exponent",
     -2 * sp.Symbol("t", positive=True) * (1 - sp.Symbol("s0", positive=True)) ** 2),
    ("allocation_add_taylor", "taylor_bound",
     1 + sp.Symbol("m", positive=True) * (sp.Symbol("m", positive=True) + 1) * (sp.Symbol("M2", positive=True) - 1)
     / (2 * sp.Symbol("t", positive=True))),
    ("allocation_add_taylor", "tail_integral",
     (sp.Symbol("M2", positive=True) / sp.Symbol("t", positive=True))
     * sp.exp(-sp.Symbol("t", positive=True) * sp.Symbol("g", positive=True) ** 2 / (2 * sp.Symbol("M2", positive=True)))),
    # substitution_mixture (issue 13): the -Delta^2/2 dropped from the loss; lam*delta_G(eps) without
    # moving to kappa'; the REMOVE curve in place of the ADD one; the atom without the (1 - lam)
    ("substitution_mixture", "loss",
     sp.log(1 - _module("substitution_mixture").LAM
            + _module("substitution_mixture").LAM * sp.exp(Delta * _module("substitution_mixture").Y / sigma**2))),
    ("substitution_mixture", "delta_remove",
     sp.Piecewise((1 - sp.exp(epsilon), sp.exp(epsilon) <= 1 - _module("substitution_mixture").LAM),
                  (_module("substitution_mixture").LAM * _module("gaussian_hockey_stick").claims()["delta"], True))),
    ("substitution_mixture", "delta_add", _module("substitution_mixture").claims()["delta_remove"]),
    ("substitution_mixture", "atom", 2 * Phi(Delta / (2 * sigma)) - 1),
    ("substitution_mixture", "antipodal_threshold",  # the other root of the quadratic (sign of sqrt)
     sp.log(((1 - _module("substitution_mixture").LAM) * (sp.exp(epsilon) - 1)
             + sp.sqrt(((1 - _module("substitution_mixture").LAM) * (1 - sp.exp(epsilon))) ** 2
                       + 4 * _module("substitution_mixture").LAM ** 2 * sp.exp(-(Delta / sigma) ** 2) * sp.exp(epsilon)))
            / (2 * _module("substitution_mixture").LAM * sp.exp(-(Delta / sigma) ** 2 / 2))) * sigma / Delta * 2),
    # antipodal_dominance: the ratio without the -C^2/(2 sigma^2) normalisation; the mixed partial
    # with the wrong sign (f supermodular: the monotonicity would go the other way); (1 - rho^2)
    # for (1 + rho^2) in d phi_rho / d rho
    ("antipodal_dominance", "likelihood_ratio",
     1 - _module("antipodal_dominance").LAM
     + _module("antipodal_dominance").LAM * sp.exp(_module("antipodal_dominance").S)),
    ("antipodal_dominance", "mixed_partial", -_module("antipodal_dominance").claims()["mixed_partial"]),
    ("antipodal_dominance", "density_drho",
     _module("antipodal_dominance").bivariate_density()
     * (_R * (1 - _R**2) + (1 - _R**2) * _S * _T * sigma**2 / Delta**2 - _R * (_S**2 + _T**2) * sigma**2 / Delta**2)
     / (1 - _R**2) ** 2),
    # tradeoff_conversion (μ with the wrong sign: the β closed form read as a TPR; e^ε0 in place of e^-ε0)
    ("tradeoff_conversion", "gaussian_tpr",
     Phi(sp.sqrt(2) * sp.erfinv(2 * _module("tradeoff_conversion").FPR - 1) - Delta / sigma)),
    ("tradeoff_conversion", "rr_tpr",
     sp.Piecewise((_E * _module("tradeoff_conversion").FPR, _module("tradeoff_conversion").FPR <= 1 / (1 + _E)),
                  (1 - (1 - _module("tradeoff_conversion").FPR) * _E, True))),
    # shuffle_count (r and 1 - r swapped; a missing E; e^eps0 on the wrong side; kappa off by e^eps)
    ("shuffle_count", "threshold", _module("shuffle_count").claims()["threshold"].subs(_module("shuffle_count").R, 1 - _module("shuffle_count").R)),
    ("shuffle_count", "delta_tail", _module("shuffle_count").claims()["delta_tail"].subs(sp.exp(epsilon) - 1, 1)),
    ("shuffle_count", "clone_ratio", 1 / _module("shuffle_count").claims()["clone_ratio"]),
    ("shuffle_count", "clone_kappa", (sp.exp(epsilon0) - 1) / ((sp.exp(epsilon0) + 1) * (sp.exp(epsilon) + 1))),
    # shuffle_coupling (the victim moved by delta0 instead of delta0/(1 + E); the other users' term
    # without the victim's own move; one side of the hockey stick only; FMT's 1 + u/2 read as the margin)
    ("shuffle_coupling", "tv_victim", delta0 / 2),
    ("shuffle_coupling", "tv_other", sp.exp(-epsilon0) * delta0),
    ("shuffle_coupling", "coupling", _module("shuffle_coupling").claims()["coupling"] / (1 + sp.exp(epsilon))),
    ("shuffle_coupling", "fmt_margin", 1 + sp.exp(-epsilon0) / 2),
    # shuffled_reduction: (B - 1)! in place of B! (the generation's triple probability alone); the
    # slack of one epoch for all E epochs
    ("shuffled_reduction", "partition_probability",
     sp.factorial(sp.Symbol("B", positive=True, integer=True) - 1) ** sp.Symbol("t", positive=True, integer=True)
     / sp.factorial(sp.Symbol("t", positive=True, integer=True) * sp.Symbol("B", positive=True, integer=True))),
    ("shuffled_reduction", "epochs_slack",
     _module("shuffled_reduction").claims()["epochs_slack"] / sp.Symbol("epochs", positive=True, integer=True)),
    # shuffle_binary (no mirror: the half scan misses the other order; Chernoff without N; the k-ary
    # blanket weight k/Z, larger than the share for k = 3 (the clone bound then falls below the truth))
    ("shuffle_binary", "mirror_background", _module("shuffle_binary").m),
    ("shuffle_binary", "chernoff_tail", _module("shuffle_binary").claims()["chernoff_tail"] ** (1 / _module("shuffle_binary").N)),
    ("shuffle_binary", "clone_share_rr", 3 / (sp.exp(epsilon0) + 2)),
    # the share at the far distance for every pair of inputs (wrong for close inputs)
    ("shuffle_binary", "clone_share_laplace", 2 * sp.exp(-epsilon0) / (1 + sp.exp(-epsilon0))),
    # shuffle_gaussian_blanket (the near end of the records in place of the far one; Phi(-h/sigma) without the mirror's 2;
    # the victim counted once among N + 1 without the 1/(N + 1); the ratio at distance h instead of 2h;
    # the factor without the h^2 term)
    ("shuffle_gaussian_blanket", "blanket_density",
     sp.exp(-(sp.Symbol("z", nonnegative=True) - sp.Symbol("h", positive=True)) ** 2 / (2 * sigma**2)) / (sp.sqrt(2 * sp.pi) * sigma)),
    ("shuffle_gaussian_blanket", "blanket_mass", sp.erfc(sp.Symbol("h", positive=True) / (sp.sqrt(2) * sigma)) / 2),
    ("shuffle_gaussian_blanket", "multiset_density", sp.Symbol("usum", positive=True)),
    ("shuffle_gaussian_blanket", "corner_ratio", sp.exp(sp.Symbol("h", positive=True) * sp.Symbol("z", nonnegative=True) / sigma**2)),
    ("shuffle_gaussian_blanket", "gamma_d_factor",
     sp.exp(-sp.Symbol("h", positive=True) * sp.Symbol("r", nonnegative=True) / sigma**2)),
    # shuffle_clone_sum (the ratio without the x' order's denominator; tanh(eps) for tanh(eps/2); atoms
    # of twice the mass; the density without the Jacobian's cosh^2; F and G off by a sqrt; the split's
    # share measured from the wrong end)
    ("shuffle_clone_sum", "multiset_ratio", (sp.Symbol("c", nonnegative=True, integer=True) + 1 + sp.Symbol("S", real=True))
     / (sp.Symbol("c", nonnegative=True, integer=True) + 1)),
    ("shuffle_clone_sum", "reduced_hockey", (1 + sp.exp(epsilon)) * (sp.Symbol("tbar", real=True) - sp.tanh(epsilon))),
    ("shuffle_clone_sum", "t_atom", (1 + sp.exp(-sp.Symbol("l", positive=True))) / 2),
    ("shuffle_clone_sum", "t_density", sp.exp(-sp.Symbol("l", positive=True) / 2) / (2 * sp.sqrt(1 - sp.Symbol("t", real=True) ** 2))),
    ("shuffle_clone_sum", "t_mass", sp.exp(-sp.Symbol("l", positive=True) / 2) * sp.Symbol("t", real=True) / (2 * (1 - sp.Symbol("t", real=True) ** 2))),
    ("shuffle_clone_sum", "t_moment", sp.exp(-sp.Symbol("l", positive=True) / 2) / (2 * (1 - sp.Symbol("t", real=True) ** 2))),
    ("shuffle_clone_sum", "spread_right",
     (sp.Symbol("Gb", real=True) - sp.Symbol("Ga", real=True) - sp.Symbol("b", real=True) * (sp.Symbol("Fb", real=True) - sp.Symbol("Fa", real=True)))
     / (sp.Symbol("b", real=True) - sp.Symbol("a", real=True))),
    # shuffle_ranges (FMT's share e^-eps0, which no user's report law splits off; the variance loss without its 1/2)
    ("shuffle_ranges", "coin_share", sp.exp(-epsilon0)),
    ("shuffle_ranges", "coin_variance_loss", 2 * _module("shuffle_ranges").claims()["coin_variance_loss"]),
    # shuffle_blanket (the blanket 10% too likely: the bound falls below an exact dataset pair; the slope
    # without the k: the blanket release's likelihood no longer matches the convolution)
    ("shuffle_blanket", "blanket_share", sp.Rational(11, 10) * k / _Z),
    ("shuffle_blanket", "blanket_weight_slope", (sp.exp(epsilon0) - 1) / _Z),
    # fixed_batch_domination: the other root of the quadratic; the + sign in Cmin; the perspective's
    # sign; tau_a^2 in place of tau_a tau_b in Plackett's identity
    ("fixed_batch_domination", "cauchy_schwarz_gap",
     (sp.sqrt(sp.Symbol("x1", positive=True) * sp.Symbol("y2", positive=True))
      + sp.sqrt(sp.Symbol("x2", positive=True) * sp.Symbol("y1", positive=True))) ** 2),
    ("fixed_batch_domination", "circumradius_root",
     (sp.sqrt(_module("fixed_batch_domination").A * _module("fixed_batch_domination").B)
      + sp.sqrt((4 - _module("fixed_batch_domination").A) * (4 - _module("fixed_batch_domination").B))) / 4),
    ("fixed_batch_domination", "cmin_r3",
     -_module("fixed_batch_domination").claims()["cmin_r3"] + _module("fixed_batch_domination").A
     * _module("fixed_batch_domination").B / 2),
    ("fixed_batch_domination", "perspective_mixed_partial",
     -_module("fixed_batch_domination").claims()["perspective_mixed_partial"]),
    ("fixed_batch_domination", "plackett_unequal",
     _module("fixed_batch_domination").claims()["plackett_unequal"] * sp.Symbol("tau_a", positive=True)
     / sp.Symbol("tau_b", positive=True)),
    # zcdp_sup (sign of the linear term; the first cell's bound without the 1/alpha)
    ("zcdp_sup", "critical", _module("zcdp_sup").s * alpha**2 - 2 * _module("zcdp_sup").c * alpha - _module("zcdp_sup").c),
    ("zcdp_sup", "first_cell", _module("zcdp_sup").s),
    # mmcc_posterior: the odds lam e^L read as the probability (no normalisation by 1 - lam)
    ("mmcc_posterior", "posterior_bound",
     _module("mmcc_posterior").LAM * sp.exp(_module("mmcc_posterior").L) / (_module("mmcc_posterior").LAM * sp.exp(_module("mmcc_posterior").L) + 1)),
]


WRONG_CLAIMS += [
    # matrix_chain (the tilt not shifting the cell; the spread's share of the lower end; the tail
    # without the shift; the second derivative's sign)
    ("matrix_chain", "cell_integral",
     sp.exp(sp.Symbol("kappa", positive=True) ** 2 / 2) * (Phi(sp.Symbol("b_end", real=True)) - Phi(sp.Symbol("a", real=True)))),
    ("matrix_chain", "upper_share", (sp.Symbol("f_b", positive=True) * sp.Symbol("m", positive=True) - sp.Symbol("I", positive=True))
     / (sp.Symbol("f_b", positive=True) - sp.Symbol("f_a", positive=True))),
    ("matrix_chain", "tilt_tail", Phi(-sp.Symbol("R", positive=True))),
    ("matrix_chain", "concavity", sp.Symbol("A", positive=True) * sp.Symbol("r", positive=True) * (1 - sp.Symbol("r", positive=True))
     * sp.Symbol("v", positive=True) ** (sp.Symbol("r", positive=True) - 2)),
]

WRONG_CLAIMS += [
    # gram_step_split: r1 and r0 swapped in the high atom; the low atom's sign; F' without the
    # denominator; the far branch without ln q
    ("gram_step_split", "split_high",
     (sp.Symbol("P", positive=True) - sp.Symbol("r1", positive=True) * sp.Symbol("Q", positive=True))
     / (1 - sp.Symbol("r0", positive=True) / sp.Symbol("r1", positive=True))),
    ("gram_step_split", "split_low", -_module("gram_step_split").claims()["split_low"]),
    ("gram_step_split", "loss_derivative", sp.Symbol("q", positive=True) * sp.exp(sp.Symbol("x", real=True))),
    ("gram_step_split", "far_branch",
     sp.Symbol("x", real=True) + sp.log(1 + (1 - sp.Symbol("q", positive=True)) / sp.Symbol("q", positive=True)
                                        * sp.exp(-sp.Symbol("x", real=True)))),
]

WRONG_CLAIMS += [
    # discrete_gaussian (the ratio's sign of the 1; the tail as its first term only)
    ("discrete_gaussian", "ratio", sp.exp(-(2 * _module("discrete_gaussian").x - 1) / (2 * sigma**2))),
    ("discrete_gaussian", "tail", sp.exp(-_module("discrete_gaussian").m ** 2 / (2 * sigma**2))),
]


_SEL = _module("selection_mechanisms")
WRONG_CLAIMS += [
    # selection_mechanisms: the BR sup without the square (RR(eps0)'s line), the pair's curve at eps0/2,
    # the loss gap halved, permute-and-flip's law without the 1/2, the 3-candidate law of the best two
    ("selection_mechanisms", "br_delta", sp.Piecewise((1 - sp.exp(epsilon), epsilon < -epsilon0),
                                                      ((_E - sp.exp(epsilon)) / (1 + _E), epsilon < epsilon0), (0, True))),
    ("selection_mechanisms", "br_pair_delta", _SEL.claims()["br_delta"].subs(epsilon0, epsilon0 / 2)),
    ("selection_mechanisms", "em_loss_gap", epsilon0 / 2),
    ("selection_mechanisms", "pf_two", 1 - sp.exp(-epsilon0 * _SEL.s / (2 * Delta))),
    ("selection_mechanisms", "pf_integral", _SEL.pf_output_law(_SEL.PF_SCORES[:2], epsilon0)[0]),
]

_PF = _module("permute_and_flip")
WRONG_CLAIMS += [
    # permute_and_flip: the law with coins e^{eps0 (u - u*)/Delta} (the constant of monotone scores), G with
    # F_a's sign flipped, the slope's sign flipped (G would decrease), the atom with one factor only, the
    # difference of exponentials without the 1/2, the Laplace pair at eps0/2 (noise scale 2 beta)
    ("permute_and_flip", "rnm_law", _SEL.pf_output_law(tuple(2 * q for q in _PF.RNM_SCORES), epsilon0)[1]),
    ("permute_and_flip", "shift_cdf", _PF.claims()["shift_cdf"] + 2 * _PF.a * sp.diff(sp.Mul(*[1 - c * _PF.a for c in (1, _PF.s2, _PF.s3)]), _PF.a)),
    ("permute_and_flip", "shift_slope", -_PF.claims()["shift_slope"]),
    ("permute_and_flip", "shift_atom", 1 - _PF.s2),
    ("permute_and_flip", "difference_density", sp.exp(-sp.Abs(_PF.y) / b) / b),
    ("permute_and_flip", "threshold_sup", _PF.claims()["threshold_sup"].subs(epsilon0, epsilon0 / 2)),
]

_TP = _module("tradeoff_from_profile")
WRONG_CLAIMS += [
    # tradeoff_from_profile: the chord to (1, y) instead of (1, 1); the slope without the -1 (always
    # positive: would hide eps < 0); case (ii) without the 1/(1 - d)
    ("tradeoff_from_profile", "chord", (_TP.d + sp.exp(epsilon) * _TP.a)),
    ("tradeoff_from_profile", "slope", (1 - _TP.alpha0) * (_TP.d + sp.exp(epsilon))),
    ("tradeoff_from_profile", "far", _TP.alpha0 * sp.exp(epsilon)),
]

_PACKED = _module("packed_fft")
WRONG_CLAIMS += [
    # packed_fft: the packed operand's l2 norm as the real part's alone (the member in the imaginary
    # part forgotten); the l1 gap without the factor 2; Parseval without the factor N
    ("packed_fft", "packed_l2_sq", _PACKED._X2**2),
    ("packed_fft", "l1_gap", _PACKED._XS * _PACKED._YS),
    ("packed_fft", "parseval", _PACKED._S),
]

@pytest.mark.parametrize(
    ("name", "key", "wrong"), WRONG_CLAIMS, ids=[f"{n}-{k_}" for n, k_, _ in WRONG_CLAIMS]
)
def test_wrong_claim_raises(name, key, wrong):
    with pytest.raises(DerivationFailed):
        _module(name).derive(claimed={key: wrong})


def test_every_export_has_a_wrong_claim_case():
    covered = {(n, k_) for n, k_, _ in WRONG_CLAIMS}
    wanted = {(n, key) for n in run_all.SCRIPTS for key in _module(n).EXPORT_SYMBOLS}
    assert wanted <= covered, wanted - covered


def test_fixed_batch_cell_rounded_the_wrong_way_is_refuted():
    """A cell dominator that takes C at the cell's top corner (Cmin(A1, B1), no square-root term)
    instead of a lower bound of the cell's minimum is refuted by a realisable configuration."""
    module = _module("fixed_batch_domination")

    def top_corner(a0, a1, b0, b1):
        return a1, b1, module.cmin(a1, b1)

    with pytest.raises(DerivationFailed):
        module._check_cells(rule=top_corner)


def test_point_fallback_catches_a_wrong_claim():
    """require_equal's rational-point fallback must not accept a claim the simplifier cannot
    refute symbolically."""
    pts = [{alpha: sp.Rational(3, 2)}, {alpha: 3}]
    assert _common.require_equal(alpha**2, alpha * alpha, "same", pts) == "symbolic"
    with pytest.raises(DerivationFailed, match="differ"):
        _common.require_equal(sp.Abs(alpha - 2), alpha - 2, "abs", pts)


# --------------------------------------------------------------------------------------------
# Exports vs independent mpmath computations
# --------------------------------------------------------------------------------------------

GAUSS_POINTS = [  # (sigma, Delta)
    ("1", "1"), ("2", "0.5"), ("0.7", "3"),
]
EPS_POINTS = ["-2.5", "-0.4", "0", "0.3", "1.7"]
ALPHA_POINTS = ["1.25", "2", "7.5"]


@pytest.mark.parametrize(("s", "d"), GAUSS_POINTS)
def test_gaussian_renyi_vs_quadrature(s, d, exports):
    got = exports["gaussian_renyi"]
    with mp.workdps(DPS):
        logp, logq = _gauss_log(d, s), _gauss_log(0, s)
        for a in ALPHA_POINTS:
            # Quadrature hint (not the answer): p^a q^(1-a) is a Gaussian bump of width sigma at
            # a*Delta (and (1-a)*Delta for Q||P); put breakpoints around both bumps.
            centres = [mp.mpf(a) * mp.mpf(d), (1 - mp.mpf(a)) * mp.mpf(d)]
            grid = [c + j * mp.mpf(s) for c in centres for j in (-12, -6, -3, 0, 3, 6, 12)]
            ref = _renyi_quad(logp, logq, a, [0, d], grid)
            ref_qp = _renyi_quad(logq, logp, a, [0, d], grid)
            assert _close(_call(got["renyi"], alpha=a, sigma=s, Delta=d), ref)
            assert _close(_call(got["renyi_QP"], alpha=a, sigma=s, Delta=d), ref_qp)
        assert _close(_call(got["kl"], sigma=s, Delta=d), _kl_quad(logp, logq, [0, d]))


@pytest.mark.parametrize(("s", "d"), GAUSS_POINTS)
def test_gaussian_hockey_stick_vs_quadrature(s, d, exports):
    got = exports["gaussian_hockey_stick"]
    with mp.workdps(DPS):
        logp, logq = _gauss_log(d, s), _gauss_log(0, s)
        span = 60 * mp.mpf(s) + 60 * mp.mpf(s) ** 2 / mp.mpf(d)  # contains every loss = eps root
        for e in EPS_POINTS:
            ref = _hockey_stick_quad(logp, logq, e, [0, d], -span, span)
            ref_qp = _hockey_stick_quad(logq, logp, e, [0, d], -span, span)
            ref_slope = -mp.exp(mp.mpf(e)) * _q_mass_of_loss_set_quad(logp, logq, e, [0, d],
                                                                       -span, span)
            assert _close(_call(got["delta"], epsilon=e, sigma=s, Delta=d), ref), e
            assert _close(_call(got["delta_QP"], epsilon=e, sigma=s, Delta=d), ref_qp), e
            assert _close(_call(got["ddelta"], epsilon=e, sigma=s, Delta=d), ref_slope), e
        crossings = _sign_changes(lambda y: logp(y) - logq(y), -span, span)  # where p = q
        tv_points = sorted(set(mp.mpf(x) for x in [0, d, *crossings]))
        tv = mp.quad(lambda y: abs(mp.exp(logp(y)) - mp.exp(logq(y))),
                     [-mp.inf, *tv_points, mp.inf]) / 2
        assert _close(_call(got["tv"], sigma=s, Delta=d), tv)


#: Notes section 10.5 (Cor 8 with Delta = 1, sigma = 1/sqrt(2 rho)): (rho, eps, delta), 15 digits.
NOTES_GAUSSIAN_TABLE = [
    ("0.01", "0.5", "9.19389868941551e-6"),
    ("0.01", "1", "2.43643839737096e-14"),
    ("0.01", "3", "1.07014286553542e-101"),
    ("0.5", "0", "0.382924922548026"),
    ("0.5", "0.5", "0.238421708134877"),
    ("0.5", "1", "0.126936737506644"),
    ("0.5", "3", "0.00153718536940095"),
    ("2", "0", "0.682689492137086"),
    ("2", "1", "0.50986166005467"),
    ("2", "3", "0.183813076544472"),
]


@pytest.mark.parametrize(("rho", "e", "value"), NOTES_GAUSSIAN_TABLE)
def test_gaussian_hockey_stick_matches_notes_table(rho, e, value, exports):
    """The erfc form keeps full relative precision even at delta ~ 1e-101 (no 1 - 1 cancelling)."""
    with mp.workdps(DPS):
        s = 1 / mp.sqrt(2 * mp.mpf(rho))
    got = _call(exports["gaussian_hockey_stick"]["delta"], epsilon=e, sigma=s, Delta=1)
    assert abs(got / mp.mpf(value) - 1) < 1e-13  # the table has 15 significant digits


LAPLACE_POINTS = [  # (b, Delta): eps0 = Delta/b
    ("1", "1"), ("2", "0.5"), ("0.5", "1.5"),
]


@pytest.mark.parametrize(("scale", "d"), LAPLACE_POINTS)
def test_laplace_renyi_vs_quadrature(scale, d, exports):
    got = exports["laplace_renyi"]
    with mp.workdps(DPS):
        e0 = mp.mpf(d) / mp.mpf(scale)
        logp, logq = _laplace_log(d, scale), _laplace_log(0, scale)
        for a in ALPHA_POINTS:
            ref = _renyi_quad(logp, logq, a, [0, d])
            ref_qp = _renyi_quad(logq, logp, a, [0, d])
            assert _close(_call(got["renyi"], alpha=a, epsilon0=e0), ref)
            assert _close(_call(got["renyi_QP"], alpha=a, epsilon0=e0), ref_qp)
        assert _close(_call(got["kl"], epsilon0=e0), _kl_quad(logp, logq, [0, d]))


def test_laplace_renyi_matches_notes_value(exports):
    """Notes section 10.7: Laplace RDP at alpha = 2, eps0 = 1 is 0.619123629999."""
    got = _call(exports["laplace_renyi"]["renyi"], alpha=2, epsilon0=1)
    assert abs(got - mp.mpf("0.619123629999")) < 1e-11


@pytest.mark.parametrize(("scale", "d"), LAPLACE_POINTS)
def test_laplace_hockey_stick_vs_quadrature(scale, d, exports):
    got = exports["laplace_hockey_stick"]
    with mp.workdps(DPS):
        e0 = mp.mpf(d) / mp.mpf(scale)
        logp, logq = _laplace_log(d, scale), _laplace_log(0, scale)
        lo, hi = -mp.mpf(d), 2 * mp.mpf(d)
        # every regime: eps < -eps0, -eps0 < eps < 0, 0 < eps < eps0, eps > eps0, and breakpoints
        for e in [-2 * e0, -e0, -e0 / 3, 0, e0 / 3, e0, 2 * e0, *EPS_POINTS]:
            ref = _hockey_stick_quad(logp, logq, e, [0, d], lo, hi)
            ref_qp = _hockey_stick_quad(logq, logp, e, [0, d], lo, hi)
            assert _close(_call(got["delta"], epsilon=e, epsilon0=e0), ref), e
            assert _close(_call(got["delta_QP"], epsilon=e, epsilon0=e0), ref_qp), e
        crossings = _sign_changes(lambda y: logp(y) - logq(y), lo, hi)  # where p = q
        tv_points = sorted(set(mp.mpf(x) for x in [0, d, *crossings]))
        tv = mp.quad(lambda y: abs(mp.exp(logp(y)) - mp.exp(logq(y))),
                     [-mp.inf, *tv_points, mp.inf]) / 2
        assert _close(_call(got["tv"], epsilon0=e0), tv)


def test_laplace_hockey_stick_matches_notes_value(exports):
    """Notes section 10.7: delta(1/3) = 0.283468689426211 at eps0 = 1."""
    got = _call(exports["laplace_hockey_stick"]["delta"], epsilon=mp.mpf(1) / 3, epsilon0=1)
    assert abs(got - mp.mpf("0.283468689426211")) < 1e-14


@pytest.mark.parametrize("e0", ["0.1", "1", "3.5"])
def test_binary_randomized_response_vs_direct_sums(e0, exports):
    got = exports["randomized_response"]
    with mp.workdps(DPS):
        e = mp.exp(mp.mpf(e0))
        p = [e / (1 + e), 1 / (1 + e)]  # outputs (1, 0)
        q = [1 / (1 + e), e / (1 + e)]
        for x in [*EPS_POINTS, f"-{e0}", e0, "-5", "5"]:
            assert _close(_call(got["delta"], epsilon=x, epsilon0=e0), _h_discrete(p, q, x),
                          SUM_RTOL), x
            assert _close(_call(got["delta_QP"], epsilon=x, epsilon0=e0), _h_discrete(q, p, x),
                          SUM_RTOL), x
        for a in ALPHA_POINTS:
            assert _close(_call(got["renyi"], alpha=a, epsilon0=e0), _renyi_discrete(p, q, a),
                          SUM_RTOL)
            assert _close(_call(got["renyi_QP"], alpha=a, epsilon0=e0), _renyi_discrete(q, p, a),
                          SUM_RTOL)
        kl = mp.fsum(pi * mp.log(pi / qi) for pi, qi in zip(p, q))
        assert _close(_call(got["kl"], epsilon0=e0), kl, SUM_RTOL)


def test_binary_rr_renyi_matches_notes_value(exports):
    """Notes section 10.7: RR D_2 at eps0 = 1 is 0.735325664056."""
    got = _call(exports["randomized_response"]["renyi"], alpha=2, epsilon0=1)
    assert abs(got - mp.mpf("0.735325664056")) < 1e-11


@pytest.mark.parametrize("n", [2, 3, 4, 7, 10])
@pytest.mark.parametrize("e0", ["0.4", "2"])
def test_kary_randomized_response_vs_direct_sums(n, e0, exports):
    got = exports["randomized_response"]
    with mp.workdps(DPS):
        p, q = _rr_pmfs(e0, n)
        for x in [*EPS_POINTS, f"-{e0}", e0, "-5", "5"]:
            assert _close(_call(got["delta_k"], epsilon=x, epsilon0=e0, k=n),
                          _h_discrete(p, q, x), SUM_RTOL), x
            assert _close(_call(got["delta_k_QP"], epsilon=x, epsilon0=e0, k=n),
                          _h_discrete(q, p, x), SUM_RTOL), x
        for a in ALPHA_POINTS:
            assert _close(_call(got["renyi_k"], alpha=a, epsilon0=e0, k=n),
                          _renyi_discrete(p, q, a), SUM_RTOL)
            assert _close(_call(got["renyi_k_QP"], alpha=a, epsilon0=e0, k=n),
                          _renyi_discrete(q, p, a), SUM_RTOL)


def test_duality_exports_vs_direct_sums(exports):
    got = exports["hockey_stick_duality"]
    masses = [
        (["0.2", "0.5", "0.3"], ["0.6", "0.1", "0.3"]),
        (["0.0", "0.25", "0.75"], ["0.5", "0.5", "0.0"]),
        (["0.9", "0.05", "0.05"], ["0.05", "0.05", "0.9"]),
        (["0.3", "0.3", "0.4"], ["0.3", "0.3", "0.4"]),
    ]
    with mp.workdps(DPS):
        for p_str, q_str in masses:
            p = [mp.mpf(x) for x in p_str]
            q = [mp.mpf(x) for x in q_str]
            named = {"p0": p[0], "p1": p[1], "q0": q[0], "q1": q[1]}
            for e in [*EPS_POINTS, "-6", "6"]:
                ref = _h_discrete(p, q, e)
                assert _close(_call(got["delta_3pt"], epsilon=e, **named), ref, SUM_RTOL)
                assert _close(_call(got["delta_3pt_QP"], epsilon=e, **named),
                              _h_discrete(q, p, e), SUM_RTOL)
                h_qp = _h_discrete(q, p, -mp.mpf(e))
                assert _close(_call(got["duality"], epsilon=e, H_QP=h_qp), ref, SUM_RTOL)


@pytest.mark.parametrize("e0", ["0", "0.5", "2"])
@pytest.mark.parametrize("d0", ["0", "1e-6", "0.3"])
def test_approx_dp_hockey_stick_vs_direct_sums(e0, d0, exports):
    """The four-point (eps0, delta0)-RR pair, summed directly (the Q = 0 outcome counts in full);
    eps0 = 0 and delta0 = 0 (outside the derivation's positive symbols) included."""
    got = exports["approx_dp"]
    with mp.workdps(DPS):
        e, d = mp.exp(mp.mpf(e0)), mp.mpf(d0)
        p = [d, (1 - d) * e / (1 + e), (1 - d) / (1 + e), mp.mpf(0)]
        q = [mp.mpf(0), (1 - d) / (1 + e), (1 - d) * e / (1 + e), d]
        for x in [*EPS_POINTS, f"-{e0}", e0, "-5", "5"]:
            assert _close(_call(got["delta"], epsilon=x, epsilon0=e0, delta0=d0), _h_discrete(p, q, x), SUM_RTOL), x
            assert _close(_call(got["delta_QP"], epsilon=x, epsilon0=e0, delta0=d0), _h_discrete(q, p, x), SUM_RTOL), x
        assert _close(_call(got["tv"], epsilon0=e0, delta0=d0), _h_discrete(p, q, 0), SUM_RTOL)


@pytest.mark.parametrize("e0", ["0.01", "0.5", "2", "8"])
def test_shuffle_coupling_exports_vs_rr_and_fmt_term(e0, exports):
    """The coupling export, independently: at n = 1 the clone pair is binary RR, and clone + coupling
    is the (eps0, delta0)-RR pair's own delta (approx_dp's export, summed directly here) on
    0 <= eps < eps0; for n up to 10^6 it never exceeds FMT Thm 3.8's (e^eps + 1)(1 + e^-eps0/2) n delta0,
    the term verifier.shuffle.approx adds, and fmt_margin is the per-user gap, >= 0."""
    got = exports["shuffle_coupling"]
    with mp.workdps(DPS):
        big, u = mp.exp(mp.mpf(e0)), mp.exp(-mp.mpf(e0))
        for d0 in ("1e-9", "0.01", "0.3"):
            d = mp.mpf(d0)
            p = [d, (1 - d) * big / (1 + big), (1 - d) / (1 + big), mp.mpf(0)]
            q = [mp.mpf(0), (1 - d) / (1 + big), (1 - d) * big / (1 + big), d]
            for frac in ("0", "0.3", "0.9"):
                x = mp.mpf(frac) * mp.mpf(e0)
                clone_one = (big - mp.exp(x)) / (big + 1)
                total = clone_one + _call(got["coupling"], epsilon=x, epsilon0=e0, delta0=d0, n=1)
                assert _close(total, _h_discrete(p, q, x), SUM_RTOL)
            for users in (1, 2, 1000, 10**6):
                for x in ("0", "1", "3"):
                    fmt = (mp.exp(mp.mpf(x)) + 1) * (1 + u / 2) * users * d
                    assert _call(got["coupling"], epsilon=x, epsilon0=e0, delta0=d0, n=users) <= fmt
        margin = _call(got["fmt_margin"], epsilon0=e0)
        assert margin >= 0
        assert _close(margin, 1 + u / 2 - _call(got["tv_other"], epsilon0=e0, delta0="1"), SUM_RTOL)


@pytest.mark.parametrize("lam", ["0.01", "0.3"])
def test_substitution_mixture_exports_vs_the_pairs(lam, exports):
    """The numeric code against the exports: verifier's PoissonSubsampled REMOVE / ADD profiles of
    the Gaussian pair are delta_remove / delta_add, and SubstitutionSubsampled's profile is their
    maximum, at eps of both signs (Delta = 2, sigma = 1.5)."""
    from verifier import Direction, Gaussian
    from verifier.pairs import PoissonSubsampled, SubstitutionSubsampled

    got = exports["substitution_mixture"]
    base = Gaussian(1.5, 2.0)
    remove, glued = PoissonSubsampled(base, float(lam)), SubstitutionSubsampled(base, float(lam))
    for x in [*EPS_POINTS, "-0.005", "0.005"]:
        r = _call(got["delta_remove"], epsilon=x, Delta=2, sigma="1.5", lam=lam)
        a = _call(got["delta_add"], epsilon=x, Delta=2, sigma="1.5", lam=lam)
        for value, bracket in ((r, remove.delta(float(x), Direction.REMOVE)), (a, remove.delta(float(x), Direction.ADD)),
                               (max(r, a), glued.delta(float(x), Direction.REMOVE))):
            assert bracket.lower - 1e-15 <= value <= bracket.upper + 1e-15, (x, value, bracket)
    assert _call(got["atom"], Delta=2, sigma="1.5", lam=lam) > 0
    from verifier.pairs import AntipodalMixture

    antipodal = AntipodalMixture(1.5, 1.0, float(lam))
    for x in EPS_POINTS:
        z = float(_call(got["antipodal_threshold"], epsilon=x, Delta=1, sigma="1.5", lam=lam))
        assert abs(float(antipodal._loss_inverse(np.array([float(x)]))[0]) - z) <= 1e-12 * max(1.0, abs(z))


# antipodal_dominance: every export against mpmath (densities, numerical derivatives), and the
# v-conditional hockey stick of step 6 against two other routes to H_kappa(P_{x,x'}).

ANTIPODAL_POINTS = [  # (sigma, Delta = C, lam)
    ("0.3", "1", "0.01"), ("1.1", "2", "0.5"), ("3", "0.7", "0.2"),
]


@pytest.mark.parametrize(("s", "d", "lam"), ANTIPODAL_POINTS)
def test_antipodal_likelihood_ratio_vs_densities(s, d, lam, exports):
    """((1 - lam) N(0) + lam N(x))/N(0) at y in R^3 from the Gaussian densities, |x| = Delta,
    against the export at s = <x, y>/sigma^2."""
    got = exports["antipodal_dominance"]["likelihood_ratio"]
    with mp.workdps(DPS):
        sd, lm = mp.mpf(s), mp.mpf(lam)
        x = [mp.mpf(d) * c for c in (mp.mpf(2) / 3, -mp.mpf(1) / 3, mp.mpf(2) / 3)]

        def density(y, mean):
            return mp.fprod(mp.npdf(yi, mi, sd) for yi, mi in zip(y, mean))

        for y in ([0, 0, 0], ["-1.5", "0.25", "2"], ["3", "-2", "0.5"]):
            y = [mp.mpf(v) for v in y]
            ref = ((1 - lm) * density(y, [0, 0, 0]) + lm * density(y, x)) / density(y, [0, 0, 0])
            inner = mp.fsum(xi * yi for xi, yi in zip(x, y)) / sd**2
            assert _close(_call(got, Delta=d, lam=lam, s=inner, sigma=s), ref, SUM_RTOL)


@pytest.mark.parametrize(("s", "d", "lam"), ANTIPODAL_POINTS)
def test_antipodal_mixed_partial_vs_numerical_derivative(s, d, lam, exports):
    """d^2/ds dt of log(1 + e^{beta u})/beta, u = a(s) - kappa a(t), by mpmath.diff; and <= 0."""
    got = exports["antipodal_dominance"]["mixed_partial"]
    with mp.workdps(DPS):
        sd, dd, lm = mp.mpf(s), mp.mpf(d), mp.mpf(lam)
        for e, beta in (("-0.5", "1"), ("0", "20"), ("1.2", "3")):
            kappa, bt = mp.exp(mp.mpf(e)), mp.mpf(beta)

            def a(z):
                return 1 - lm + lm * mp.exp(z - dd**2 / (2 * sd**2))

            def softplus(x, y):
                return mp.log1p(mp.exp(bt * (a(x) - kappa * a(y)))) / bt

            for s0, t0 in (("0", "0"), ("-1.5", "2"), ("1", "0.5")):
                ref = mp.diff(softplus, (mp.mpf(s0), mp.mpf(t0)), (1, 1))
                value = _call(got, Delta=d, beta=beta, epsilon=e, lam=lam, s=s0, sigma=s, t=t0)
                assert value < 0
                assert _close(value, ref, QUAD_RTOL, QUAD_ATOL), (e, beta, s0, t0)


@pytest.mark.parametrize(("s", "d"), [("0.3", "1"), ("2", "3")])
def test_antipodal_density_drho_vs_numerical_derivatives(s, d, exports):
    """The bivariate normal density from its covariance matrix: d/d rho by mpmath.diff, and
    Plackett's identity tau^2 d^2/ds dt of the same density."""
    got = exports["antipodal_dominance"]["density_drho"]
    with mp.workdps(DPS):
        tau2 = (mp.mpf(d) / mp.mpf(s)) ** 2

        def density(x, y, r):
            cov = mp.matrix([[tau2, r * tau2], [r * tau2, tau2]])
            z = mp.matrix([x, y])
            quad = (z.T * cov**-1 * z)[0]
            return mp.exp(-quad / 2) / (2 * mp.pi * mp.sqrt(mp.det(cov)))

        for r in ("-0.9", "0", "0.6"):
            for s0, t0 in (("0", "0"), ("0.5", "-2"), ("3", "1")):
                x, y, rr = mp.mpf(s0), mp.mpf(t0), mp.mpf(r)
                value = _call(got, Delta=d, rho=r, s=s0, sigma=s, t=t0)
                assert _close(value, mp.diff(lambda q: density(x, y, q), rr), QUAD_RTOL, QUAD_ATOL)
                plackett = tau2 * mp.diff(lambda u, v: density(u, v, rr), (x, y), (1, 1))
                assert _close(value, plackett, QUAD_RTOL, QUAD_ATOL)


def _hockey_stick_given_x(rho, noise, lam, kappa):
    """H_kappa(P_{x,x'}) for |x| = |x'| = 1 from step 3's E[(a(X) - kappa a(Y))_+], conditioning on
    X instead of on the v coordinate: given X = x, Y ~ N(rho x, tau^2 (1 - rho^2)) and the payoff
    (A - B e^Y)_+ (A = a(x) - kappa (1 - lam), B = kappa lam e^{-tau^2/2}) has the lognormal closed
    form A Phi(k) - B e^{m + v/2} Phi(k - sqrt v), k = (log(A/B) - m)/sqrt v."""
    rho, noise, lam, kappa = (mp.mpf(v) for v in (rho, noise, lam, kappa))
    tau2 = 1 / noise**2
    big_b = kappa * lam * mp.exp(-tau2 / 2)
    var = tau2 * (1 - rho**2)

    def integrand(x):
        big_a = 1 - lam + lam * mp.exp(x - tau2 / 2) - kappa * (1 - lam)
        if big_a <= 0:
            return mp.mpf(0)
        mean = rho * x
        k_ = (mp.log(big_a / big_b) - mean) / mp.sqrt(var)
        put = big_a * mp.ncdf(k_) - big_b * mp.exp(mean + var / 2) * mp.ncdf(k_ - mp.sqrt(var))
        return put * mp.npdf(x, 0, mp.sqrt(tau2))

    cuts = [0]
    if kappa > 1:  # A > 0 iff x > x0
        cuts.append(mp.log((kappa - 1) * (1 - lam) / lam) + tau2 / 2)
    return mp.quad(integrand, [-mp.inf, *sorted(cuts), mp.inf])


@pytest.mark.parametrize(("rho", "noise", "lam", "kappa"), [
    ("0.5", "0.3", "0.1", "0.5"), ("0", "1.1", "0.5", "3"), ("-0.5", "1.1", "0.01", "1"),
    ("-0.9", "3", "0.5", "1"), ("0.9", "1.1", "0.5", "1.5"),
])
def test_antipodal_v_conditional_hockey_stick_vs_x_conditional(rho, noise, lam, kappa):
    """Step 6's representation (conditioning on the v coordinate, the 1-D antipodal closed form
    inside) against conditioning on X with the lognormal closed form inside; 30 digits."""
    module = _module("antipodal_dominance")
    with mp.workdps(DPS):
        got = module.hockey_stick(rho, noise, lam, kappa)
        ref = _hockey_stick_given_x(rho, noise, lam, kappa)
    assert _close(got, ref), (got, ref)


def test_antipodal_hockey_stick_vs_two_dimensional_definition():
    """int (p - kappa q)_+ over R^2 for x = (1, 0), x' = (rho, sqrt(1 - rho^2)) by scipy's adaptive
    cubature (double precision, a kink along p = kappa q) against step 6's representation."""
    from scipy import integrate

    rho, noise, lam, kappa = 0.0, 1.1, 0.5, 0.5
    means = ((0.0, 0.0), (1.0, 0.0), (rho, (1 - rho**2) ** 0.5))

    def dens(y1, y2, mean):
        return np.exp(-((y1 - mean[0]) ** 2 + (y2 - mean[1]) ** 2) / (2 * noise**2)) / (2 * np.pi * noise**2)

    def f(y2, y1):
        common = (1 - lam) * dens(y1, y2, means[0])
        return max(0.0, common + lam * dens(y1, y2, means[1]) - kappa * (common + lam * dens(y1, y2, means[2])))

    half = 1 + 12 * noise
    value, _ = integrate.dblquad(f, -half, half, -half, half, epsabs=1e-12, epsrel=1e-10)
    with mp.workdps(DPS):
        ref = _module("antipodal_dominance").hockey_stick(rho, noise, lam, kappa)
    assert abs(value - float(ref)) < 1e-9


# --------------------------------------------------------------------------------------------
# tradeoff_conversion: the exports against the Neyman–Pearson test computed directly (mpmath)
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("s", "d"), GAUSS_POINTS)
@pytest.mark.parametrize("fpr", ["1e-4", "0.01", "0.5", "0.9"])
def test_gaussian_tpr_vs_likelihood_ratio_test(s, d, fpr, exports):
    """N(Δ, σ²) against N(0, σ²): the likelihood-ratio test rejects above x with Q-tail α, so
    TPR = P(X > x) with x the root of 1 − Φ(x/σ) = α (findroot, not a quantile function)."""
    got = exports["tradeoff_conversion"]["gaussian_tpr"]
    with mp.workdps(DPS):
        a = mp.mpf(fpr)
        x = mp.findroot(lambda y: mp.ncdf(-y / mp.mpf(s)) - a, mp.mpf(0))
        reference = mp.ncdf((mp.mpf(d) - x) / mp.mpf(s))
        assert _close(_call(got, Delta=d, sigma=s, fpr=fpr), reference)


@pytest.mark.parametrize("e0", ["0.5", "1", "3"])
def test_rr_tpr_vs_neyman_pearson(e0, exports):
    got = exports["tradeoff_conversion"]["rr_tpr"]
    with mp.workdps(DPS):
        e = mp.exp(mp.mpf(e0))
        for j in range(1, 40):
            a = mp.mpf(j) / 40
            # flag output 1 (ratio e) first, then output 0 (ratio 1/e) with what is left of α
            first = min(a, 1 / (1 + e))
            reference = first * e + max(mp.mpf(0), a - first) / e
            assert _close(_call(got, epsilon0=e0, fpr=a), reference, atol=mp.mpf("1e-25"))


# --------------------------------------------------------------------------------------------
# permute_and_flip: the exports against quadrature and a direct search (mpmath)
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("e0", ["0.5", "1", "3"])
def test_rnm_law_vs_quadrature(e0, exports):
    """P(q_2 + Z_2 is the largest), Z_i ~ Exp(eps0/2), by tanh-sinh quadrature of f_2 prod F_j from 0
    (below 0 the best candidate's F vanishes) to oo."""
    scores = [mp.mpf(q) for q in _PF.RNM_SCORES]
    with mp.workdps(DPS):
        lam = mp.mpf(e0) / 2

        def integrand(t):
            out = lam * mp.exp(-lam * (t - scores[1]))
            for j, q in enumerate(scores):
                if j != 1:
                    out *= 1 - mp.exp(-lam * (t - q))
            return out

        reference = mp.quad(integrand, [0, 1, mp.inf])
        assert _close(_call(exports["permute_and_flip"]["rnm_law"], epsilon0=e0), reference)


@pytest.mark.parametrize(("c2", "c3"), [("0.5", "0.25"), ("1", "0.9")])
def test_shift_cdf_is_f_plus_its_derivative(c2, c3, exports):
    """G(t) = F(t) + F'(t) (lam = 1) by numerical differentiation of F(t) = prod (1 - s_i e^{-t}); G's
    slope in a by differentiating F + F' at t = -ln a numerically; the atom G(t = 0)."""
    ex = exports["permute_and_flip"]
    with mp.workdps(DPS):
        coins = (1, mp.mpf(c2), mp.mpf(c3))

        def cdf(t):
            return mp.fprod(1 - c * mp.exp(-t) for c in coins)

        for t in ("0.1", "0.7", "3"):
            t = mp.mpf(t)
            got = _call(ex["shift_cdf"], a=mp.exp(-t), s2=c2, s3=c3)
            assert _close(got, cdf(t) + mp.diff(cdf, t))
            slope = mp.diff(lambda x: cdf(-mp.log(x)) + mp.diff(cdf, -mp.log(x)), mp.exp(-t))
            assert _close(_call(ex["shift_slope"], a=mp.exp(-t), s2=c2, s3=c3), slope, atol=mp.mpf("1e-20"))
        assert _close(_call(ex["shift_atom"], s2=c2, s3=c3), cdf(0) + mp.diff(cdf, 0, direction=1), atol=mp.mpf("1e-20"))


@pytest.mark.parametrize("scale", ["0.5", "2"])
def test_difference_density_vs_convolution(scale, exports):
    with mp.workdps(DPS):
        rate = 1 / mp.mpf(scale)
        for y in ("-1.5", "0.3", "2"):
            y = mp.mpf(y)
            reference = mp.quad(lambda z, y=y: rate * mp.exp(-rate * z) * rate * mp.exp(-rate * (z - y)), [max(0, y), mp.inf])
            assert _close(_call(exports["permute_and_flip"]["difference_density"], b=scale, y=y), reference)


@pytest.mark.parametrize("e0", ["0.5", "1", "3"])
def test_threshold_sup_vs_direct_search(e0, exports):
    """sup over v of P(L > -v) - e^eps P(L > eps0 - v), L ~ Laplace(1), by a grid and golden-section
    search (the function is unimodal), at eps across (-1.5 eps0, 1.5 eps0)."""
    got = exports["permute_and_flip"]["threshold_sup"]
    with mp.workdps(DPS):
        e0 = mp.mpf(e0)

        def survival(x):
            return 1 - mp.exp(x) / 2 if x < 0 else mp.exp(-x) / 2

        for j in range(-6, 7):
            eps = e0 * j / 4

            def h(v, eps=eps):
                return survival(-v) - mp.exp(eps) * survival(e0 - v)

            grid = [-40 + 80 * mp.mpf(i) / 800 for i in range(801)]
            v = max(grid, key=h)
            lo, hi = v - mp.mpf(80) / 800, v + mp.mpf(80) / 800
            golden = (mp.sqrt(5) - 1) / 2
            for _ in range(150):
                c, d = hi - golden * (hi - lo), lo + golden * (hi - lo)
                lo, hi = (lo, d) if h(c) > h(d) else (c, hi)
            assert _close(_call(got, epsilon=eps, epsilon0=e0), h((lo + hi) / 2), atol=mp.mpf("1e-17"))
