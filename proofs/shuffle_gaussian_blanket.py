"""The privacy blanket for shuffled Gaussian reports (verifier.shuffle.gaussian_blanket).

Setting: n users, user i reports y_i + N(0, sigma^2) with its record y_i in [-h, h] (h = half the
pair's sensitivity), the reports released in uniformly random order; the victim's record is x (P)
or x' (Q). Balle, Bell, Gascon & Nissim, "The privacy blanket of the shuffle model" (CRYPTO 2019,
the blanket decomposition), decompose every report law as R_y = gamma * omegat + (1 - gamma) * rho_y with the blanket
omega = min_y R_y, gamma its mass, omegat = omega/gamma (the paper's text was not available here to
check its statement; every step used below is derived and checked here).

1. The blanket (exports ``blanket_density``, ``blanket_mass``). For z >= 0 and y in [-h, h],
   (z + h)^2 - (z - y)^2 = (h + y)(2z + h - y) >= 0, so min_y phi_sigma(z - y) = phi_sigma(z + h) and, by
   the mirror, omega(z) = phi_sigma(|z| + h); gamma = 2 int_0^inf phi_sigma(z + h) dz = erfc(h/(sigma sqrt 2))
   (derived by integration).
2. Reduction. Each other user's report is drawn by flipping a coin B_i ~ Bern(gamma) and drawing from
   omegat (B_i = 1) or rho_(y_i) (B_i = 0): the same law. Revealing the B_i and the reports with B_i = 0
   is a post-processing in the adversary's favour: the shuffled release is a function of (N, the
   shuffled victim-and-blanket reports) and of independent draws whose law does not depend on x, so
   delta(eps) <= sum_N Pr[Bin(n - 1, gamma) = N] H_N (joint convexity over N). Checked exactly below.
3. Density (export ``multiset_density``). With u = R_x/omegat, v = R_x'/omegat the N + 1 reports in
   random order have density prod omegat(z_j) * (1/(N + 1)) sum_j u(z_j) under P (the victim is any of
   the N + 1 with probability 1/(N + 1)); derived for N <= 2 by symmetrising the ordered densities.
   So H_N = E_(omegat^(N+1))[(sum_j W(z_j))_+]/(N + 1), W = u - e^eps v.
4. Monotone in N. The (N + 2)-multiset is the (N + 1)-multiset with one more omegat draw shuffled in,
   a Markov kernel that does not depend on x: H_(N+1) <= H_N (checked exactly below), so the sum over
   N may take each bucket's smallest N.
5. The corner's ratio (export ``corner_ratio``): for x = h, z >= 0, u/gamma = phi(z - h)/phi(z + h) =
   e^(2hz/sigma^2), and for z < 0 u = gamma (the victim's residual lives on one side).
6. Rounding direction. (s)_+ is convex and increasing, so E[(sum W_j)_+] grows when the law of W is
   replaced by one above it in the increasing convex order: a pointwise larger W (the envelope
   sup_x u_x - e^eps inf_x' u_x' over a cell of records), a mean-preserving spread (the two-point law
   on the ends of an interval of z, then on lattice neighbours), masses rounded up, values raised to a
   floor. The lattice's step may be anything: the split of a value between its neighbours on any
   lattice is a mean-preserving spread. Checked exactly below on a finite randomizer: the spread, the
   lattice split at any step and the envelope never lower H_N.
7. Dimension (export ``gamma_d_factor``): in d dimensions with records of norm <= h the closest record
   to z is h z/|z|, so omega(z) = phi_d at distance |z| + h = phi_d(z) e^(-(2h|z| + h^2)/(2 sigma^2)) and
   gamma_d = E[e^(-(2h|Z| + h^2)/(2 sigma^2))], Z ~ N(0, sigma^2 I_d), which falls like e^(-h sqrt(d)/sigma).

The exact checks use a finite randomizer, a discretised Gaussian: records y in {1, 2, 3}, outputs
j in {0, ..., 4}, R_y(j) proportional to 2^(-(j - y)^2), in rationals. For n <= 4 users, every dataset
of the others and every ordered pair (x, x'), and e^eps in {1, 3/2, 3}: the brute-force delta of the
shuffled release is <= the blanket bound of step 2, H_N from step 3 equals the hockey stick of the
reduced pair computed by enumeration, H_N does not increase with N, and steps 6's spread and envelope
do not lower H_N, nor does the split to a lattice of step 1/4, 2 or 16 (any step, coarser than
every value included), and E[(sum W)_+] = c E[(sum W/c)_+] for the lattice's step c (how a step > 1
is composed on a grid of step 1).

Sources: the decomposition is Balle et al.'s; steps 1-7 derived here (the coordinator's lead, issue 38).
Typos found: none.

Exports of :func:`derive`:

================  ===============================================  ==========================
name              expression                                       free symbols
================  ===============================================  ==========================
blanket_density   exp(-(z + h)^2/(2 sigma^2))/(sqrt(2 pi) sigma)   h, sigma, z
blanket_mass      erfc(h/(sqrt(2) sigma))                          h, sigma
multiset_density  (u0 + ... + uN)/(N + 1)                          N, usum
corner_ratio      exp(2 h z/sigma^2)                               h, sigma, z
gamma_d_factor    exp(-(2 h r + h^2)/(2 sigma^2))                  h, r, sigma
================  ===============================================  ==========================
"""

from __future__ import annotations

import itertools
import math
import sys
from collections import Counter
from fractions import Fraction
from pathlib import Path
from typing import Mapping

if __package__ in (None, ""):  # run as `python proofs/shuffle_gaussian_blanket.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import sympy as sp

from proofs._common import DerivationFailed, merge_claims, record_check, require_equal, sigma

__all__ = ["EXPORT_SYMBOLS", "claims", "derive", "finite_randomizer", "shuffle_delta", "blanket_bound", "reduced_hockey"]

EXPORT_SYMBOLS = {
    "blanket_density": ("h", "sigma", "z"),
    "blanket_mass": ("h", "sigma"),
    "multiset_density": ("N", "usum"),
    "corner_ratio": ("h", "sigma", "z"),
    "gamma_d_factor": ("h", "r", "sigma"),
}

H = sp.Symbol("h", positive=True)
Z = sp.Symbol("z", nonnegative=True)
R = sp.Symbol("r", nonnegative=True)
N = sp.Symbol("N", nonnegative=True, integer=True)
USUM = sp.Symbol("usum", positive=True)
Y = sp.Symbol("y", real=True)


def _phi(t: sp.Expr) -> sp.Expr:
    return sp.exp(-t**2 / (2 * sigma**2)) / (sp.sqrt(2 * sp.pi) * sigma)


def claims() -> dict[str, sp.Expr]:
    """The closed forms stated in the module docstring."""
    return {
        "blanket_density": sp.exp(-(Z + H) ** 2 / (2 * sigma**2)) / (sp.sqrt(2 * sp.pi) * sigma),
        "blanket_mass": sp.erfc(H / (sp.sqrt(2) * sigma)),
        "multiset_density": USUM / (N + 1),
        "corner_ratio": sp.exp(2 * H * Z / sigma**2),
        "gamma_d_factor": sp.exp(-(2 * H * R + H**2) / (2 * sigma**2)),
    }


def _check_blanket(claimed: sp.Expr) -> sp.Expr:
    """Step 1: the far end of [-h, h] minimises phi_sigma(z - y) for z >= 0."""
    gap = sp.factor(sp.expand((Z + H) ** 2 - (Z - Y) ** 2))
    if sp.simplify(gap - (H + Y) * (2 * Z + H - Y)) != 0:
        raise DerivationFailed(f"blanket: (z + h)^2 - (z - y)^2 = {gap}, not (h + y)(2z + h - y)")
    record_check("symbolic")  # both factors >= 0 for z >= 0, -h <= y <= h
    require_equal(_phi(Z + H), claimed, "blanket density on z >= 0")
    return claimed


def _blanket_mass_derived(density: sp.Expr) -> sp.Expr:
    return 2 * sp.integrate(density, (Z, 0, sp.oo))


def _check_multiset_density(claimed: sp.Expr) -> None:
    """Step 3 for N = 0, 1, 2: sum over the victim's position of its ordered density, against the
    blanket's product, symmetrised over orders."""
    for count in range(3):
        us = sp.symbols(f"u0:{count + 1}", positive=True)
        ordered = sum(us[j] for j in range(count + 1)) / (count + 1)  # victim at position j w.p. 1/(N + 1)
        got = claimed.subs({N: count, USUM: sum(us)})
        if sp.simplify(ordered - got) != 0:
            raise DerivationFailed(f"multiset density at N = {count}: {ordered} != {got}")
    record_check("symbolic")


# ---- the finite randomizer (exact rationals) ------------------------------------------------------

RECORDS = (1, 2, 3)
OUTPUTS = tuple(range(5))


def finite_randomizer() -> dict[int, tuple[Fraction, ...]]:
    """R_y(j) proportional to 2^(-(j - y)^2) on the outputs 0..4, for y in {1, 2, 3}."""
    out = {}
    for y in RECORDS:
        weights = [Fraction(1, 2 ** ((j - y) ** 2)) for j in OUTPUTS]
        total = sum(weights)
        out[y] = tuple(w / total for w in weights)
    return out


def _multiset_law(laws: list[tuple[Fraction, ...]]) -> Counter:
    """Law of the sorted tuple of independent draws from ``laws`` (the shuffled release)."""
    law: Counter = Counter()
    for outs in itertools.product(OUTPUTS, repeat=len(laws)):
        p = Fraction(1)
        for dist, o in zip(laws, outs):
            p *= dist[o]
        if p:
            law[tuple(sorted(outs))] += p
    return law


def _hockey(p: Counter, q: Counter, kappa: Fraction) -> Fraction:
    return sum((max(Fraction(0), p[k] - kappa * q.get(k, 0)) for k in p), Fraction(0))


def shuffle_delta(randomizer, users: int, kappa: Fraction) -> Fraction:
    """The exact worst case over every dataset of the others and every ordered pair (x, x')."""
    best = Fraction(0)
    for others in itertools.combinations_with_replacement(RECORDS, users - 1):
        rest = [randomizer[y] for y in others]
        for x, x2 in itertools.permutations(RECORDS, 2):
            best = max(best, _hockey(_multiset_law([randomizer[x]] + rest), _multiset_law([randomizer[x2]] + rest), kappa))
    return best


def _blanket(randomizer) -> tuple[Fraction, tuple[Fraction, ...]]:
    omega = tuple(min(randomizer[y][j] for y in RECORDS) for j in OUTPUTS)
    gamma = sum(omega)
    return gamma, tuple(w / gamma for w in omega)


def reduced_hockey(randomizer, x: int, x2: int, blanket_draws: int, kappa: Fraction) -> Fraction:
    """H_N by enumeration: the victim's report among N draws of the normalised blanket."""
    _, tilde = _blanket(randomizer)
    rest = [tilde] * blanket_draws
    return _hockey(_multiset_law([randomizer[x]] + rest), _multiset_law([randomizer[x2]] + rest), kappa)


def _density_hockey(w_law: list[tuple[Fraction, Fraction]], draws: int) -> Fraction:
    """E[(sum of ``draws`` i.i.d. W)_+]/draws for the finite law [(value, mass)] of W."""
    total = Fraction(0)
    for picks in itertools.product(w_law, repeat=draws):
        mass, value = Fraction(1), Fraction(0)
        for v, m in picks:
            mass *= m
            value += v
        total += mass * max(Fraction(0), value)
    return total / draws


def _w_law(randomizer, x: int, x2: int, kappa: Fraction) -> list[tuple[Fraction, Fraction]]:
    _, tilde = _blanket(randomizer)
    return [((randomizer[x][j] - kappa * randomizer[x2][j]) / tilde[j], tilde[j]) for j in OUTPUTS]


def blanket_bound(randomizer, users: int, kappa: Fraction, gamma: Fraction | None = None) -> Fraction:
    """Step 2's bound: sum_N Pr[Bin(n - 1, gamma) = N] max over ordered pairs of H_N (``gamma`` in
    place of the blanket's mass: a mutant when larger)."""
    own, _ = _blanket(randomizer)
    g = own if gamma is None else gamma
    total = Fraction(0)
    for count in range(users):
        weight = math.comb(users - 1, count) * g**count * (1 - g) ** (users - 1 - count)
        worst = max(_density_hockey(_w_law(randomizer, x, x2, kappa), count + 1) for x, x2 in itertools.permutations(RECORDS, 2))
        total += weight * worst
    return total


KAPPAS = (Fraction(1), Fraction(3, 2), Fraction(3))
#: Lattice steps of the split, finer and far coarser than W's values (|W| < 8 here).
LATTICE_STEPS = (Fraction(1, 4), Fraction(2), Fraction(16))


def _lattice_spread(w_law: list[tuple[Fraction, Fraction]], step: Fraction) -> list[tuple[Fraction, Fraction]]:
    """Each value split between its two neighbours on the lattice step*Z, keeping its mean."""
    out = []
    for v, m in w_law:
        low = step * math.floor(v / step)
        frac = (v - low) / step
        out += [(low, m * (1 - frac)), (low + step, m * frac)]
    return out


def _check_finite() -> None:
    """Steps 2, 3, 4 and 6 in exact rationals on :func:`finite_randomizer`."""
    rand = finite_randomizer()
    for kappa in KAPPAS:
        for x, x2 in itertools.permutations(RECORDS, 2):
            w_law = _w_law(rand, x, x2, kappa)
            previous = None
            for count in range(4):
                by_density = _density_hockey(w_law, count + 1)
                if by_density != reduced_hockey(rand, x, x2, count, kappa):
                    raise DerivationFailed(f"H_N by the density formula != enumeration at N = {count}, x = {x}, x' = {x2}")
                if previous is not None and by_density > previous:
                    raise DerivationFailed(f"H_N increases from N = {count - 1} to {count}: {previous} -> {by_density}")
                previous = by_density
                if count <= 2:  # step 6: spread the largest value to two points around it, keeping its mean
                    (v, m), rest = max(w_law), sorted(w_law)[:-1]
                    spread = rest + [(v - 1, m / 2), (v + 1, m / 2)]
                    if _density_hockey(spread, count + 1) < by_density:
                        raise DerivationFailed(f"a mean-preserving spread lowered H_{count}")
            for step in LATTICE_STEPS:  # step 6: the split to lattice neighbours, at any step; the scaling
                spread = _lattice_spread(w_law, step)
                for count in range(3):
                    if _density_hockey(spread, count + 1) < _density_hockey(w_law, count + 1):
                        raise DerivationFailed(f"the split to the lattice of step {step} lowered H_{count}")
                    scaled = [(v / step, m) for v, m in spread]
                    if step * _density_hockey(scaled, count + 1) != _density_hockey(spread, count + 1):
                        raise DerivationFailed(f"E[(sum W)_+] != {step} E[(sum W/{step})_+] at N = {count}")
        for count in range(3):  # step 6: the envelope over the cell x in {2, 3}, x' in {1, 2}
            _, tilde = _blanket(rand)
            envelope = [(max(rand[a][j] for a in (2, 3)) / tilde[j] - kappa * min(rand[b][j] for b in (1, 2)) / tilde[j], tilde[j])
                        for j in OUTPUTS]
            top = _density_hockey(envelope, count + 1)
            for x, x2 in itertools.product((2, 3), (1, 2)):
                if x != x2 and _density_hockey(_w_law(rand, x, x2, kappa), count + 1) > top:
                    raise DerivationFailed(f"the cell envelope is below the pair ({x}, {x2}) at N = {count}")
        for users in (2, 3, 4):
            exact, bound = shuffle_delta(rand, users, kappa), blanket_bound(rand, users, kappa)
            if exact > bound:
                raise DerivationFailed(f"blanket bound {float(bound)} < exact delta {float(exact)} at n = {users}, e^eps = {kappa}")
    record_check("points")


def derive(*, claimed: Mapping[str, sp.Expr] | None = None) -> dict[str, sp.Expr]:
    """Derive every export and check it against :func:`claims` (``claimed`` replaces entries).
    Raises DerivationFailed."""
    claim = merge_claims(claims(), claimed)
    density = _check_blanket(claim["blanket_density"])
    require_equal(_blanket_mass_derived(density), claim["blanket_mass"], "blanket mass",
                  [{H: hv, sigma: sv} for hv in (sp.Rational(1, 2), 2) for sv in (1, sp.Rational(3, 2))])
    _check_multiset_density(claim["multiset_density"])
    require_equal(sp.simplify(_phi(Z - H) / _phi(Z + H)), claim["corner_ratio"], "corner likelihood ratio to the blanket")
    require_equal(sp.simplify(_phi(R + H) / _phi(R)), claim["gamma_d_factor"], "blanket factor at distance r (any d)")
    _check_finite()
    return {name: claim[name] for name in EXPORT_SYMBOLS}


if __name__ == "__main__":
    for key, value in derive().items():
        print(f"{key} = {value}")
