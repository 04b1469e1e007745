"""Shuffled batches reduce to the sequential shuffle model: one epoch of DataLoader(shuffle=True)
over n records in batches of B is a post-processing of an ADAPTIVE sequential shuffle of t records
(one per batch), so FMT's clone pair (plus the coupling of proofs/shuffle_coupling.py for Gaussian
noise) bounds it, and E epochs are bounded by the E-fold product of that pair plus E couplings.

Setting. Records x_1 … x_n (x_1 the target; replace-one neighbours D, D' differ in x_1 only), batches
of B, f = floor(n/B) full ones, r = n - fB left over, E epochs. Step j of an epoch releases
y_j = sum_{x in batch j} g_{theta_j}(x) + Z_j, Z_j ~ N(0, sigma^2 C^2 I) (or Laplace noise), where
theta_j is any function of everything released before (adaptive) and ||g|| <= C. The batch layout is
a uniform labelled partition (a uniform permutation cut into consecutive batches), independent of
the data.

Theorem. Let (P_t, Q_t) be FMT's clone pair for t = f users and local parameter eps0 (Feldman,
McMillan & Talwar 2021, arXiv:2012.12803, Thm 3.2; verifier.shuffle.clones), delta0 = the step
pair's delta(eps0) at sensitivity 2C (0 for Laplace with eps0 = 2C/b), tau = tv_victim +
(t - 1) tv_other the per-epoch coupling of proofs/shuffle_coupling.py, lambda = fB/n. One epoch is
dominated, up to total variation lambda*tau on each side, by the pair

    B | n:                 (P_t, Q_t)
    drop_last, B ∤ n:      lambda (P_t, Q_t) + (1 - lambda) (bottom, bottom)     (bottom: one atom)
    no drop_last, B ∤ n:   lambda [1](P_t, Q_t) + (1 - lambda) [2](N(2C, s^2), N(0, s^2))

(a labelled mixture: the label is revealed), and for every eps

    delta_E(eps) <= H_{e^eps}(epoch pair^{(x)E}) + ``epochs_slack``,
    epochs_slack = (1 + e^eps) E lambda (tv_victim + (t - 1) tv_other).

Proof.

1. Generation (exact count, step ``generation``). For B | n, t = n/B: draw F = {target} plus t - 1
   other records uniformly; place the n - t records outside F uniformly into the B - 1 free slots of
   every batch; place F's members one per batch by an independent uniform permutation. A labelled
   partition is produced by exactly B^(t-1) triples (F must take one member of every batch, the
   target in its own), each of probability 1/(C(n-1, t-1) (n-t)!/((B-1)!)^t t!), so every labelled
   partition has probability ``partition_probability`` = (B!)^t/n!, the uniform law (symbolic in the
   count, and by enumerating every triple for (n, B) in {(4, 2), (6, 2), (6, 3), (8, 2), (8, 4), (9, 3)}).
   Refuted variants (checked): F's members placed in a fixed order (the target always in batch 1);
   for B ∤ n, one F-member in each of the f + 1 blocks (the target lands in the leftover block with
   probability 1/(f + 1), not r/n).
2. B ∤ n (step ``partial``): let G = "the target is in a full batch", Pr[G] = lambda, revealed.
   Given G, the r leftover records are a uniform r-subset of the others and the full batches a
   uniform partition of the remaining fB records: step 1 with n' = fB (checked by enumeration for
   (n, B) in {(5, 2), (7, 2), (7, 3), (8, 3)}). Given not-G (drop_last), no release depends on the
   target: equal laws under D and D'; without drop_last the target is in the last (partial) batch
   and the epoch is one step at sensitivity 2C given the rest, dominated by the step pair.
3. Reveal R = (F, the placement of the records outside F) (and G): its law does not depend on the
   data. Given R, subtracting the revealed records' gradients (computable from R and the history)
   leaves z_j = g_{theta_j}(x_{pi(j)}) + Z_j, pi the uniform permutation of F: the sequential
   shuffle of FMT with adaptive randomizers R_j(h, x) = N(g_{theta_j(h, R)}(x), s^2). Revealing R
   and passing from z to y is post-processing, so the epoch's hockey stick is at most the average
   over R of the sequential shuffle's (joint convexity), and the whole epoch is a post-processing
   of (R, z). For every history, ||g(x) - g(x')|| <= 2C, so each R_j(h, .) is (eps0, delta0)-DP
   (pure eps0 = 2C/b for Laplace noise in one dimension, the 2C Laplace pair's largest loss).
4. Adaptive clones. FMT state Thm 3.1/3.2 for this sequential process (z_i = R^(i)(z_{1:i-1},
   x_{pi(i)}), each R^(i)(z_{1:i-1}, .) eps0-DP for all histories). Why it holds: the clone
   decomposition R^(i)(h, x_j) = (e^-eps0/2)(W0(h) + W1(h)) + (1 - e^-eps0) LO(h, x_j) has weights
   that do not depend on h, so every user's type (0-clone, 1-clone, own) is drawn before the run,
   independent of pi; given the counts the types sit in uniformly random positions, and the
   post-processing draws the outputs step by step from W0(h), W1(h) or LO(h, x), the history h
   being its own earlier output (step ``adaptive``: the exact delta of the sequential shuffle of
   finite adaptive randomizers, every dataset of n <= 3 users over 3 inputs, is below the clone
   bound, and below clone + coupling for an (eps0, delta0) family; with the permutation revealed it
   exceeds the clone bound). (FMT's later paper, arXiv:2208.04591, withdrew its adaptive
   statement for the STRONGER clone bound, whose p < 1/(e^eps0 + 1) case fails; the standard clone
   pair used here is not affected. verifier therefore calls verifier.shuffle.clones' standard sum,
   not whatever bound the shuffle-model method picks.)
5. Coupling, adaptively (step ``epochs_slack``). proofs/shuffle_coupling.py's constructions act on
   one step's laws: for every history h and every step, the victim's two laws move by <= tv_victim
   and every other input's law by <= tv_other to laws with the clone decomposition. The modified
   sequential process differs from the true one, for each pi, by at most the sum of the steps' TVs
   (a step-by-step coupling: the same history, the step's laws coupled maximally), and averaging
   over pi keeps it: tv_victim + (t - 1) tv_other per epoch, lambda times that when B ∤ n (only the
   G branch is modified). Epochs: the modified E-epoch run is a post-processing of E independent
   draws of the epoch pair (each epoch's post-processing reads the earlier epochs' outputs), so it
   is dominated by the product pair; the true run is within E lambda tau in TV of it on each side,
   and P(S) - e^eps Q(S) <= P'(S) - e^eps Q'(S) + TV(P, P') + e^eps TV(Q, Q').
6. Tightness: when every other record equals the target's value in D, (F, placement) carries no
   information and the reduction loses nothing; that pair of datasets is the allocation pair verifier
   uses for the LOWER end (verifier.certify.methods.shuffled). tests/shuffle/test_shuffled_reduction.py
   checks the whole chain on tiny datasets: the batch mechanism's hockey stick (numerical quadrature over
   all labelled partitions, adaptive gradient maps) <= the reduced mechanism's (R revealed), equal for
   all-equal datasets, <= the clone bound for t users (Laplace noise); a reduction that reveals F's
   permutation exceeds the clone bound, and one that drops the adaptive step falls below the truth.

Exports of :func:`derive`:

======================  ======================================================  ===========================================
name                    expression                                              free symbols
======================  ======================================================  ===========================================
partition_probability   (B!)^t / (tB)!                                          B, t
epochs_slack            (1 + e^eps) E lambda (tv_victim + (t - 1) tv_other)     delta0, epochs, epsilon, epsilon0, lambda, t
======================  ======================================================  ===========================================
"""

from __future__ import annotations

import itertools
import math
import sys
from collections import Counter
from collections.abc import Iterator, Mapping
from fractions import Fraction
from pathlib import Path

if __package__ in (None, ""):  # run as `python proofs/shuffled_reduction.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import sympy as sp

from proofs import shuffle_coupling
from proofs._common import DerivationFailed, delta0, epsilon, epsilon0, merge_claims, record_check, require_equal

__all__ = ["EXPORT_SYMBOLS", "claims", "derive", "generation_law", "uniform_law", "partial_generation_law", "sequential_law"]

EXPORT_SYMBOLS = {
    "partition_probability": ("B", "t"),
    "epochs_slack": ("delta0", "epochs", "epsilon", "epsilon0", "lambda", "t"),
}

B = sp.Symbol("B", positive=True, integer=True)
t = sp.Symbol("t", positive=True, integer=True)
epochs = sp.Symbol("epochs", positive=True, integer=True)
lam = sp.Symbol("lambda", positive=True)

#: A layout: the batch index of every record (record 0 is the target; the leftover block is index -1).
Layout = tuple[int, ...]


def claims() -> dict[str, sp.Expr]:
    """The closed forms stated in the module docstring."""
    coupling = shuffle_coupling.claims()
    per_epoch = coupling["tv_victim"] + (t - 1) * coupling["tv_other"]
    return {
        "partition_probability": sp.factorial(B) ** t / sp.factorial(t * B),
        "epochs_slack": (1 + sp.exp(epsilon)) * epochs * lam * per_epoch,
    }


# ---- step 1: the generation, enumerated in exact rationals ---------------------------------------


def uniform_law(n: int, batch: int, blocks: int) -> dict[Layout, Fraction]:
    """The law of the layout of a uniform permutation of n records cut into ``blocks`` batches of
    ``batch`` (records beyond blocks*batch in the leftover block -1)."""
    law: Counter[Layout] = Counter()
    for perm in itertools.permutations(range(n)):
        layout = [0] * n
        for pos, rec in enumerate(perm):
            layout[rec] = pos // batch if pos < blocks * batch else -1
        law[tuple(layout)] += 1
    total = math.factorial(n)
    return {k: Fraction(v, total) for k, v in law.items()}


def _placements(records: list[int], slots: list[int]) -> Iterator[dict[int, int]]:
    """Every assignment of ``records`` to the multiset of block labels ``slots`` (distinct orders
    of the multiset), each equally likely."""
    for labels in set(itertools.permutations(slots)):
        yield dict(zip(records, labels))


def _f_generation(n: int, others_in_f: int, slots: list[int], perms: list[tuple[int, ...]]) -> dict[Layout, Fraction]:
    """The law of the layout when F = the target plus ``others_in_f`` uniform others, the records
    outside F fill the block labels ``slots`` uniformly, and F's members take blocks by a uniform
    choice among ``perms`` (the shape every generation below shares)."""
    law: Counter[Layout] = Counter()
    others = list(range(1, n))
    for chosen in itertools.combinations(others, others_in_f):
        members = [0, *chosen]
        rest = [r for r in others if r not in chosen]
        placements = list(_placements(rest, slots))
        for place in placements:
            for perm in perms:
                layout = [0] * n
                for r, j in place.items():
                    layout[r] = j
                for m, j in zip(members, perm):
                    layout[m] = j
                law[tuple(layout)] += Fraction(1, math.comb(n - 1, others_in_f) * len(placements) * len(perms))
    return dict(law)


def generation_law(n: int, batch: int, fixed_order: bool = False) -> dict[Layout, Fraction]:
    """The law of the layout produced by step 1's generation (B | n): F = target + t - 1 others,
    the rest into B - 1 slots per batch, F one per batch by a uniform permutation (``fixed_order``:
    the refuted variant that places F's members in a fixed order)."""
    t_ = n // batch
    perms = [tuple(range(t_))] if fixed_order else list(itertools.permutations(range(t_)))
    return _f_generation(n, t_ - 1, [j for j in range(t_) for _ in range(batch - 1)], perms)


def partial_generation_law(n: int, batch: int, naive: bool = False) -> dict[Layout, Fraction]:
    """Step 2's generation for B ∤ n: with probability lambda = fB/n the target is in a full batch,
    the leftover block a uniform r-subset of the others, the full batches by step 1 on the rest;
    otherwise the target is in the leftover block with a uniform (r - 1)-subset of the others and
    the others' full batches uniform. ``naive``: the refuted variant with one F-member per block
    over all f + 1 blocks, F's permutation uniform."""
    f, r = n // batch, n % batch
    law: Counter[Layout] = Counter()
    others = list(range(1, n))
    if naive:
        slots = [j for j in range(f) for _ in range(batch - 1)] + [-1] * (r - 1)
        return _f_generation(n, f, slots, list(itertools.permutations(list(range(f)) + [-1])))
    lam_ = Fraction(f * batch, n)
    for in_full in (True, False):
        weight = lam_ if in_full else 1 - lam_
        size = r if in_full else r - 1
        for left in itertools.combinations(others, size):
            rest = [x for x in others if x not in left]
            pool = [0, *rest] if in_full else rest
            inner = uniform_law(len(pool), batch, f)
            for sub, mass in inner.items():
                layout = [0] * n
                for x in left:
                    layout[x] = -1
                if not in_full:
                    layout[0] = -1
                for x, j in zip(pool, sub):
                    layout[x] = j
                law[tuple(layout)] += weight * mass / math.comb(n - 1, size)
    return dict(law)


def _check_generation(probability: sp.Expr) -> None:
    for n, batch in ((4, 2), (6, 2), (6, 3), (8, 2), (8, 4), (9, 3)):
        truth = uniform_law(n, batch, n // batch)
        got = generation_law(n, batch)
        if got != truth:
            raise DerivationFailed(f"generation: not the uniform layout law at n = {n}, B = {batch}")
        claimed = probability.subs({B: batch, t: n // batch})
        if any(sp.Rational(p.numerator, p.denominator) != claimed for p in truth.values()):
            raise DerivationFailed(f"partition_probability: {claimed} is not the uniform mass at n = {n}, B = {batch}")
        if generation_law(n, batch, fixed_order=True) == truth:
            raise DerivationFailed(f"a fixed order of F's members should not be uniform (n = {n}, B = {batch})")
    record_check("points")


def _check_partial() -> None:
    for n, batch in ((5, 2), (7, 2), (7, 3), (8, 3)):
        truth = uniform_law(n, batch, n // batch)
        if partial_generation_law(n, batch) != truth:
            raise DerivationFailed(f"partial batch: the G-split generation is not uniform at n = {n}, B = {batch}")
        if partial_generation_law(n, batch, naive=True) == truth:
            raise DerivationFailed(f"partial batch: the naive f + 1 block generation should not be uniform (n = {n}, B = {batch})")
        in_full = sum(p for layout, p in truth.items() if layout[0] != -1)
        if in_full != Fraction((n // batch) * batch, n):
            raise DerivationFailed(f"partial batch: Pr[G] = {in_full}, not fB/n at n = {n}, B = {batch}")
    record_check("points")


# ---- step 4/5: the clone bound (with the coupling) holds for ADAPTIVE sequential randomizers ------


Law = list[Fraction]


def _rows(raw: list[list[int]]) -> list[Law]:
    return [[Fraction(v, sum(row)) for v in row] for row in raw]


#: Adaptive finite randomizers over 3 inputs and 3 outputs: step 1's rows, and step j >= 2's rows
#: as a function of the previous output (each family pure for the pure cases, (eps0, delta0) with
#: zero masses for the approximate one).
ADAPTIVE_PURE = (
    _rows([[4, 2, 2], [2, 4, 2], [2, 2, 4]]),
    {0: _rows([[5, 3, 2], [3, 5, 2], [3, 3, 4]]), 1: _rows([[2, 2, 4], [2, 4, 2], [4, 2, 2]]), 2: _rows([[3, 3, 3], [2, 3, 4], [4, 3, 2]])},
)
ADAPTIVE_APPROX = (
    _rows([[8, 2, 0], [2, 8, 0], [5, 4, 1]]),
    {0: _rows([[6, 3, 1], [1, 3, 6], [3, 4, 3]]), 1: _rows([[1, 8, 1], [0, 9, 1], [1, 9, 0]]), 2: _rows([[7, 3, 0], [3, 7, 0], [4, 4, 2]])},
)


def sequential_law(data: tuple[int, ...], family: tuple[Law, dict[int, Law]], shuffle: bool = True) -> dict[tuple[int, ...], Fraction]:
    """Exact law of the outputs z_1 … z_n of FMT's sequential shuffle: a uniform permutation pi,
    z_j from the randomizer of step j (step 1's rows, then the rows chosen by z_{j-1}) on x_{pi(j)}
    (``shuffle=False``: the order of ``data`` itself, i.e. the permutation revealed)."""
    first, later = family
    law: Counter = Counter()
    perms = list(itertools.permutations(data)) if shuffle else [data]
    for perm in perms:
        paths = {(): Fraction(1, len(perms))}
        for j, x in enumerate(perm):
            nxt: dict[tuple[int, ...], Fraction] = {}
            for path, mass in paths.items():
                row = first[x] if j == 0 else later[path[-1]][x]
                for z, pz in enumerate(row):
                    if pz:
                        nxt[path + (z,)] = nxt.get(path + (z,), Fraction(0)) + mass * pz
            paths = nxt
        for path, mass in paths.items():
            law[path] += mass
    return dict(law)


def _hockey(p: Mapping, q: Mapping, big: Fraction) -> Fraction:
    return sum((max(Fraction(0), v - big * q.get(k, Fraction(0))) for k, v in p.items()), Fraction(0))


def _family_eps0_delta0(family: tuple[Law, dict[int, Law]], big0: Fraction) -> Fraction:
    """The largest delta0 at e^eps0 = ``big0`` over every step's rows and every ordered input pair."""
    first, later = family
    worst = Fraction(0)
    for rows in (first, *later.values()):
        for a, b in itertools.permutations(rows, 2):
            worst = max(worst, sum((max(Fraction(0), x - big0 * y) for x, y in zip(a, b)), Fraction(0)))
    return worst


def _check_adaptive(coupling: sp.Expr) -> None:
    """Exact delta of the adaptive sequential shuffle (every dataset of n <= 3 users over 3 inputs,
    both adaptive families) <= FMT's clone pair delta (pure family, e^eps0 = 2, its largest ratio)
    resp. clone + coupling (the approximate family at e^eps0 in {3/2, 4} with its delta0)."""
    cases = [(ADAPTIVE_PURE, Fraction(2))] + [(ADAPTIVE_APPROX, big) for big in (Fraction(3, 2), Fraction(4))]
    for family, big0 in cases:
        d0 = _family_eps0_delta0(family, big0)
        if family is ADAPTIVE_PURE and d0 != 0:
            raise DerivationFailed("the pure adaptive family is not eps0 = ln 2 DP")
        for users in (2, 3):
            for big_eps in (Fraction(1), Fraction(6, 5)):
                bound = sp.Rational(*_fraction(shuffle_coupling.clone_delta(users, big0, big_eps)))
                if d0:
                    bound += sp.nsimplify(sp.simplify(coupling.subs({
                        epsilon0: sp.log(sp.Rational(*_fraction(big0))), delta0: sp.Rational(*_fraction(d0)),
                        epsilon: sp.log(sp.Rational(*_fraction(big_eps))), shuffle_coupling.n: users})))
                for others in itertools.combinations_with_replacement(range(3), users - 1):
                    for a, b in itertools.permutations(range(3), 2):
                        truth = _hockey(sequential_law((a, *others), family), sequential_law((b, *others), family), big_eps)
                        if sp.Rational(*_fraction(truth)) > bound:
                            raise DerivationFailed(
                                f"adaptive shuffle: exact delta {float(truth):.6g} > clone bound {float(bound):.6g} "
                                f"(n = {users}, e^eps0 = {big0}, e^eps = {big_eps}, victim {a} vs {b}, others {others})"
                            )
    # the check has teeth: with the permutation revealed (the victim first) the pure family exceeds
    # the clone bound for 3 users
    revealed = _hockey(sequential_law((0, 1, 1), ADAPTIVE_PURE, shuffle=False), sequential_law((1, 1, 1), ADAPTIVE_PURE, shuffle=False), Fraction(1))
    if not revealed > shuffle_coupling.clone_delta(3, Fraction(2), Fraction(1)):
        raise DerivationFailed("the permutation revealed should exceed the clone bound for 3 users")
    record_check("points")


def _fraction(x: Fraction) -> tuple[int, int]:
    return x.numerator, x.denominator


def derive(*, claimed: Mapping[str, sp.Expr] | None = None) -> dict[str, sp.Expr]:
    """Check every step of the module docstring against :func:`claims` (``claimed`` replaces
    entries). Raises DerivationFailed."""
    claim = merge_claims(claims(), claimed)
    n_ = t * B
    preimages = B ** (t - 1)
    triple = 1 / (sp.binomial(n_ - 1, t - 1) * sp.factorial(n_ - t) / sp.factorial(B - 1) ** t * sp.factorial(t))
    pts = [{B: b_, t: m} for b_ in (1, 2, 3, 5) for m in (1, 2, 4, 7)]
    require_equal(sp.combsimp(preimages * triple), claim["partition_probability"], "partition_probability", pts)
    _check_generation(claim["partition_probability"])
    _check_partial()
    # shuffle_coupling's claim (its own derive() checks it, run_all runs it) with n = t users
    per_epoch = shuffle_coupling.claims()["coupling"].subs(shuffle_coupling.n, t)
    require_equal(per_epoch * epochs * lam, claim["epochs_slack"], "epochs_slack",
                  [{epsilon: e, epsilon0: e0, delta0: d, t: m, epochs: k_, lam: l_}
                   for e in (0, sp.Rational(1, 2)) for e0 in (sp.Rational(1, 3), 2) for d in (sp.Rational(1, 7),)
                   for m in (1, 5) for k_ in (1, 10) for l_ in (1, sp.Rational(3, 4))])
    _check_adaptive(shuffle_coupling.claims()["coupling"])
    return {name: claim[name] for name in EXPORT_SYMBOLS}


if __name__ == "__main__":
    for key, value in derive().items():
        print(f"{key} = {value}")
