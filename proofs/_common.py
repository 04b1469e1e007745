"""Shared pieces of the sympy derivations in ``proofs/``.

Every derivation script imports from here:

* :class:`DerivationFailed`, the one exception a derivation raises when a derived expression and the
  claimed closed form disagree (never a bare ``assert``: ``python -O`` strips those);
* the canonical sympy symbols used in every exported expression (``sigma, Delta, epsilon, alpha, b,
  epsilon0, k``), defined once so that expressions from different scripts share symbols;
* :func:`require_equal` and :func:`require_piecewise_equal`, the two ways a derivation compares what
  it derived with what it claims;
* :func:`discrete_hockey_stick` and :func:`discrete_renyi_mgf`, the definitions of the hockey-stick
  divergence and of the Renyi moment sum for finite spaces (atoms with multiplicities).

Rewrites with ``force=True`` (expand_log, powsimp) are used in the derivations only on logs and
powers of densities and probability masses, which are positive; the zero test of
:func:`require_equal` never forces.

Symbol assumptions (they matter: sympy treats symbols with different assumptions as different):

========== ============================== ===================================================
name       assumptions                    meaning
========== ============================== ===================================================
sigma      positive                       Gaussian noise standard deviation
Delta      positive                       sensitivity (distance between the two means)
epsilon    real                           the hockey-stick argument; any real number
alpha      positive (meaningful: > 1)     Renyi order
b          positive                       Laplace scale
epsilon0   positive                       a mechanism's pure-DP parameter (Delta/b for Laplace)
k          positive integer (use k >= 2)  number of outputs of k-ary randomized response
delta0     positive (meaningful: < 1)     the delta0 of an (epsilon0, delta0)-DP step
========== ============================== ===================================================
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

import sympy as sp

__all__ = [
    "DerivationFailed",
    "sigma",
    "Delta",
    "epsilon",
    "alpha",
    "b",
    "epsilon0",
    "k",
    "delta0",
    "Phi",
    "merge_claims",
    "require_equal",
    "require_piecewise_equal",
    "condition_breakpoints",
    "branch_at",
    "truth_value",
    "discrete_hockey_stick",
    "discrete_renyi_mgf",
    "strip_abs_on_interval",
    "record_check",
]

sigma = sp.Symbol("sigma", positive=True)
Delta = sp.Symbol("Delta", positive=True)
epsilon = sp.Symbol("epsilon", real=True)
alpha = sp.Symbol("alpha", positive=True)
b = sp.Symbol("b", positive=True)
epsilon0 = sp.Symbol("epsilon0", positive=True)
k = sp.Symbol("k", positive=True, integer=True)
delta0 = sp.Symbol("delta0", positive=True)

#: Absolute tolerance of the point-wise fallback in :func:`require_equal`. Points are exact
#: rationals; the difference is evaluated with 60 significant digits, so a true identity leaves
#: a residue near 1e-60 times the size of the terms. 1e-40 leaves 20 digits of room for
#: cancellation and is far below any typo-sized error.
POINT_ATOL = sp.Float("1e-40", 60)
_POINT_DIGITS = 60

#: How many checks of :func:`require_equal` succeeded by each method ("symbolic", "points").
#: run_all.py reads it to report how each script was proved; nothing else depends on it.
METHOD_COUNTS: Counter[str] = Counter()


class DerivationFailed(Exception):
    """A derived expression disagrees with the claimed closed form (or a step could not be done)."""


def record_check(method: str) -> None:
    """Count a check done outside :func:`require_equal` ("symbolic" or "points")."""
    if method not in ("symbolic", "points"):
        raise ValueError(f"method={method!r}; use 'symbolic' or 'points'")
    METHOD_COUNTS[method] += 1


def Phi(x: sp.Expr) -> sp.Expr:
    """Standard normal CDF, Phi(x) = erfc(-x / sqrt 2) / 2.

    Written with erfc, not (1 + erf(x/sqrt 2))/2, so that lambdified exports do not cancel
    catastrophically in the lower tail (Phi(-10) ~ 7.6e-24 would be 1 - 1 in the erf form).
    """
    return sp.erfc(-x / sp.sqrt(2)) / 2


def merge_claims(
    defaults: Mapping[str, sp.Expr], claimed: Mapping[str, sp.Expr] | None
) -> dict[str, sp.Expr]:
    """The default claimed closed forms, with entries of ``claimed`` replacing them.

    A key of ``claimed`` that is not a known claim is a programming error in the caller; it raises
    ``KeyError`` naming the known keys (it must not be silently ignored, or an injected wrong claim
    would never be checked).
    """
    merged = dict(defaults)
    for key, value in (claimed or {}).items():
        if key not in defaults:
            raise KeyError(f"unknown claim {key!r}; known claims: {sorted(defaults)}")
        merged[key] = sp.sympify(value)
    return merged


def _is_zero_symbolically(diff: sp.Expr) -> bool:
    """Only assumption-respecting rewrites here (no ``force=True``): a forced log/power rule can
    turn a false identity into 0."""
    if diff == 0:
        return True
    for attempt in (
        lambda e: sp.simplify(e),
        lambda e: sp.simplify(e.rewrite(sp.erf)) if e.has(sp.erfc) else e,
        lambda e: sp.simplify(sp.expand(e.rewrite(sp.exp))),
    ):
        try:
            if attempt(diff) == 0:
                return True
        except (TypeError, ValueError, NotImplementedError):  # pragma: no cover - sympy quirks
            continue
    return False


def require_equal(
    derived: sp.Expr,
    claimed: sp.Expr,
    what: str,
    points: Iterable[Mapping[sp.Symbol, sp.Expr]] | None = None,
) -> str:
    """Raise :class:`DerivationFailed` unless ``derived == claimed``.

    First tries to simplify ``derived - claimed`` to 0. If that fails and ``points`` is given,
    checks the difference at every point (a mapping of symbols to exact rationals; every free
    symbol of the difference must be assigned) with 60-digit evaluation and absolute tolerance
    :data:`POINT_ATOL`. Returns ``"symbolic"`` or ``"points"``, the method that succeeded.
    """
    derived = sp.sympify(derived)
    claimed = sp.sympify(claimed)
    diff = derived - claimed
    if _is_zero_symbolically(diff):
        METHOD_COUNTS["symbolic"] += 1
        return "symbolic"
    if points is None:
        raise DerivationFailed(
            f"{what}: derived expression {derived} does not simplify to the claimed {claimed} "
            f"(difference {sp.simplify(diff)})"
        )
    n_points = 0
    for point in points:
        n_points += 1
        value = diff.subs(point)
        if value.free_symbols:
            raise DerivationFailed(
                f"{what}: point {dict(point)} leaves free symbols {value.free_symbols} in the "
                "difference; assign every parameter"
            )
        num = sp.N(value, _POINT_DIGITS)
        if not num.is_number or num.has(sp.nan, sp.zoo, sp.oo, -sp.oo) or abs(num) > POINT_ATOL:
            raise DerivationFailed(
                f"{what}: derived {derived} and claimed {claimed} differ at {dict(point)}: "
                f"derived - claimed = {sp.N(value, 20)}"
            )
    if n_points == 0:
        raise DerivationFailed(f"{what}: symbolic check failed and no points were given")
    METHOD_COUNTS["points"] += 1
    return "points"


def _relation_value(rel: sp.Rel) -> bool | None:
    diff = sp.factor(sp.simplify(rel.lhs - rel.rhs))
    ask = {
        sp.StrictLessThan: diff.is_negative,
        sp.LessThan: diff.is_nonpositive,
        sp.StrictGreaterThan: diff.is_positive,
        sp.GreaterThan: diff.is_nonnegative,
        sp.Equality: diff.is_zero,
        sp.Unequality: None if diff.is_zero is None else not diff.is_zero,
    }
    return ask.get(type(rel))


def truth_value(cond: sp.Basic) -> bool | None:
    """True/False if ``cond`` (a relation or boolean combination) is decided by the symbols'
    assumptions, else None. Relations are decided from the sign of lhs - rhs."""
    if cond in (sp.true, sp.false):
        return bool(cond)
    if isinstance(cond, sp.Rel):
        return _relation_value(cond)
    if isinstance(cond, (sp.And, sp.Or, sp.Not)):
        values = [truth_value(arg) for arg in cond.args]
        if isinstance(cond, sp.Not):
            return None if values[0] is None else not values[0]
        if isinstance(cond, sp.And):
            if any(v is False for v in values):
                return False
            return True if all(v is True for v in values) else None
        if any(v is True for v in values):
            return True
        return False if all(v is False for v in values) else None
    return None


def branch_at(expr: sp.Expr, var: sp.Symbol, sample: sp.Expr) -> sp.Expr:
    """Replace every Piecewise in ``expr`` by the branch that is active at ``var = sample``.

    The branch expressions keep ``var`` symbolic. Conditions must be decidable at the sample from
    the symbols' assumptions (e.g. ``epsilon < epsilon0`` at ``epsilon = epsilon0/2``); an
    undecidable condition raises :class:`DerivationFailed`.
    """

    def pick(pw: sp.Piecewise) -> sp.Expr:
        for branch, cond in pw.args:
            value = truth_value(sp.sympify(cond).subs(var, sample))
            if value is True:
                return branch
            if value is not False:
                raise DerivationFailed(f"cannot decide condition {cond} at {var} = {sample}")
        raise DerivationFailed(f"no branch of {pw} is active at {var} = {sample}")

    return sp.sympify(expr).replace(lambda e: isinstance(e, sp.Piecewise), pick)


def condition_breakpoints(exprs: Iterable[sp.Expr], var: sp.Symbol) -> list[sp.Expr]:
    """Every root in ``var`` of every relation inside a Piecewise condition of ``exprs``,
    deduplicated and sorted (the order must be decidable from the symbols' assumptions)."""
    roots: list[sp.Expr] = []
    for expr in exprs:
        for pw in sp.sympify(expr).atoms(sp.Piecewise):
            for _, cond in pw.args:
                for rel in sp.sympify(cond).atoms(sp.Rel):
                    d = rel.lhs - rel.rhs
                    if var not in d.free_symbols:
                        continue
                    found = sp.solve(d, var)
                    if not found:
                        raise DerivationFailed(f"cannot solve the condition {rel} for {var}")
                    roots.extend(found)
    unique: list[sp.Expr] = []
    for root in roots:
        if all(sp.simplify(root - other) != 0 for other in unique):
            unique.append(sp.simplify(root))

    def before(x: sp.Expr, y: sp.Expr) -> bool:
        value = truth_value(sp.Lt(x, y, evaluate=False))
        if value is None:
            raise DerivationFailed(f"cannot order the breakpoints {x} and {y}")
        return value

    ordered: list[sp.Expr] = []
    for root in unique:  # insertion sort with a decidable comparison
        pos = 0
        while pos < len(ordered) and before(ordered[pos], root):
            pos += 1
        ordered.insert(pos, root)
    return ordered


def require_piecewise_equal(
    derived: sp.Expr,
    claimed: sp.Expr,
    var: sp.Symbol,
    what: str,
    points: Iterable[Mapping[sp.Symbol, sp.Expr]] | None = None,
) -> list[sp.Expr]:
    """Prove two piecewise functions of ``var`` equal on the whole real line.

    The breakpoints are collected from the conditions of BOTH expressions
    (:func:`condition_breakpoints`), so a claim with a misplaced breakpoint cannot slip between
    samples. On each open interval between consecutive breakpoints (and the two unbounded ones)
    the active branches are analytic in ``var``, so the branches are compared as expressions with
    ``var`` symbolic; then both sides are compared at each breakpoint itself. Returns the
    breakpoints.
    """
    bps = condition_breakpoints([derived, claimed], var)
    if bps:
        samples = [bps[0] - 1] + [(l + r) / 2 for l, r in zip(bps, bps[1:])] + [bps[-1] + 1]
    else:
        samples = [sp.Integer(0)]
    point_list = list(points) if points is not None else None
    for sample in samples:
        d = branch_at(derived, var, sample)
        c = branch_at(claimed, var, sample)
        require_equal(d, c, f"{what} on the interval containing {var} = {sample}", point_list)
    for bp in bps:
        require_equal(
            derived.subs(var, bp), claimed.subs(var, bp), f"{what} at {var} = {bp}", point_list
        )
    return bps


def discrete_hockey_stick(
    atoms: Iterable[tuple[sp.Expr, sp.Expr, sp.Expr]], eps: sp.Expr
) -> sp.Expr:
    """sup_S P(S) - e^eps Q(S) for a finite space, straight from the definition.

    ``atoms`` is a list of ``(multiplicity, P(y), Q(y))`` with Q(y) > 0 (multiplicity counts atoms
    with identical masses). The sup is attained by S = {y : P(y) - e^eps Q(y) > 0}; since
    Q(y) > 0, P(y) - e^eps Q(y) > 0 iff eps < log(P(y)/Q(y)) (the privacy loss of y), which is how
    each term's Piecewise condition is written.
    """
    total = sp.Integer(0)
    for mult, p, q in atoms:
        loss = sp.expand_log(sp.log(sp.simplify(p / q)), force=True)
        total += mult * sp.Piecewise((p - sp.exp(eps) * q, eps < loss), (0, True))
    return total


def discrete_renyi_mgf(atoms: Iterable[tuple[sp.Expr, sp.Expr, sp.Expr]], a: sp.Expr) -> sp.Expr:
    """E_Q[(P/Q)^a] = sum_y P(y)^a Q(y)^(1-a), so D_a(P||Q) = log(this) / (a - 1)."""
    return sp.Add(*[mult * p**a * q ** (1 - a) for mult, p, q in atoms])


def _decide(relation: sp.Basic, what: str) -> bool:
    value = truth_value(relation)
    if value is None:
        raise DerivationFailed(f"{what}: cannot decide {relation} from the symbols' assumptions")
    return value


def strip_abs_on_interval(expr: sp.Expr, var: sp.Symbol, lo: sp.Expr, hi: sp.Expr) -> sp.Expr:
    """``expr`` restricted to the open interval (lo, hi) of ``var``, with every Abs removed.

    Each ``Abs(a)`` must have ``a`` affine in ``var`` with its root outside (lo, hi) (or constant
    in ``var`` with a known sign), so ``a`` has one sign on the interval, read off at an interior
    point; ``Abs(a)`` becomes ``a`` or ``-a``. Anything undecidable raises DerivationFailed.
    """
    lo, hi = sp.sympify(lo), sp.sympify(hi)
    if lo == -sp.oo and hi == sp.oo:
        inner = sp.Integer(0)
    elif lo == -sp.oo:
        inner = hi - 1
    elif hi == sp.oo:
        inner = lo + 1
    else:
        inner = (lo + hi) / 2

    def unfold(node: sp.Abs) -> sp.Expr:
        arg = node.args[0]
        poly = sp.Poly(arg, var)
        if poly.degree() > 1:
            raise DerivationFailed(f"Abs({arg}) is not affine in {var}")
        if poly.degree() == 1:
            root = sp.solve(arg, var)[0]
            left_of = lo != -sp.oo and _decide(sp.Le(root, lo), f"root of Abs({arg})")
            right_of = hi != sp.oo and _decide(sp.Ge(root, hi), f"root of Abs({arg})")
            if not (left_of or right_of):
                raise DerivationFailed(f"Abs({arg}) changes sign inside ({lo}, {hi})")
        at_inner = sp.simplify(arg.subs(var, inner))
        if at_inner.is_positive:
            return arg
        if at_inner.is_negative:
            return -arg
        raise DerivationFailed(f"sign of {arg} on ({lo}, {hi}) is not decidable")

    return sp.sympify(expr).replace(lambda e: isinstance(e, sp.Abs), unfold)
