"""MMCC for a matrix mechanism under Poisson sampling (:class:`~verifier.schemes.MatrixPoisson`):
conditional composition of per-step Gaussian-mixture pairs (UPPER) and a block projection of the
attained pair (LOWER). Derivations: ``proofs/mmcc_posterior.py``.

Units of σ: A = Δ·C/σ (N×N, lower-triangular, A >= 0). A record of group r takes part in the steps
J = {r, r + b, …}, each independently with probability q; with every other record's contribution
known to the adversary (post-processing) the release is y = A·B + Z, B_j ~ Bernoulli(q) for j ∈ J
(0 elsewhere), Z ~ N(0, I_N): the pair P = law(y) against Q = N(0, I_N) (REMOVE; ADD is (Q, P)).
That this scalar pair dominates the mechanism with adaptively chosen vector gradients of norm <= Δ
for C >= 0 is MMCC's reduction (Choquette-Choo, Ganesh, Steinke & Thakurta 2024, §4), taken here as
stated; the pair is attained (gradient Δ·e₁ in every step, every other record 0), so LOWER bounds on
it are lower bounds on the mechanism for any C.

UPPER (conditional composition, MMCC Thm 3.1). Row i of y given y_{<i}: y_i = S_i + Z_i with
S_i = Σ_{j∈J, j<=i} A_ij B_j, whose law is the posterior of B given y_{<i}.

1. Posterior bound (derived, proofs/mmcc_posterior.py): for j < i and any values of B_{<j},
   P(B_j = 1 | y_{<i}, B_{<j}) <= q e^{L_j} / (q e^{L_j} + 1 − q), L_j = ⟨y_{<i}, v⟩ − ‖v‖²/2,
   v = A_{<i} e_j: the likelihood ratio of B_j = 1 against 0 is a ratio of two mixtures over B_{>j}
   with the same weights, at most the largest ratio of components, exp(⟨y − A b, v⟩ − ‖v‖²/2) <=
   exp(L_j) because ⟨A b, v⟩ >= 0 (A >= 0, b >= 0).
2. Tail bound of L_j under the first argument of the hockey stick (the law the bad event is
   measured under): ADD (y ~ N(0, I)): L_j ~ N(−‖v‖²/2, ‖v‖²) exactly, τ = −‖v‖²/2 + ‖v‖Φ̄⁻¹(β).
   REMOVE (y ~ P): ⟨y, v⟩ = Σ_{k∈J, k<i} w_k B_k + ‖v‖G with w_k = ⟨A_{<i} e_k, v⟩ >= 0; the w_k are
   rounded UP to a grid (a stochastically larger sum), its law computed by convolution, and τ is
   the smallest point (bisection, upper end kept) where Σ_m P(W = m) Φ̄((τ + ‖v‖²/2 − m)/‖v‖) <= β
   (with a relative margin of 1e-9 for the floating-point sum). L_j <= τ fails with probability
   <= β; β = δ_E / M over the M bounds of the run (union bound).
3. On the good event, sequential coupling (B_j <= B̃_j with B̃_j ~ Bernoulli(p̃_j) independent, each
   conditional probability being <= p̃_j whatever came before) makes S_i stochastically smaller
   than S̃_i = A_ii B_i + Σ_{j<i} A_ij B̃_j (A >= 0). By MMCC Cor 4.4 (a stochastically larger mixing
   law over non-negative means dominates, both orientations) the conditional pair is dominated by
   (Σ_s P(S̃_i = s) N(s, 1), N(0, 1)). S̃_i's atoms are merged onto the largest atom of each cell
   of a grid and its tails rounded up (:func:`verifier.matrix.conditional.rounded_step_pair`), so
   the pair only grows and equal steps repeat; a step whose row reads no earlier participation
   is exactly the Poisson-subsampled Gaussian (no rounding).
4. δ(ε) <= δ_PLD(ε) + δ_E, the per-step pairs composed by the PLD engine
   (:func:`verifier.matrix.conditional.compose_step_pairs`, dominating side); with b groups the
   record's group is unknown, so the UPPER bound is the maximum over the groups.

LOWER (block projection, derived): choose a block length L; the record's gradient is Δ·e₁ at the
participating steps j whose column's support (rows with A_rj > 0) lies inside one block of L
consecutive rows and 0 at the others (an attained pair); the statistic T_l = ⟨u_l, y⟩/‖u_l‖ of block
l, u_l = Σ of its selected columns, is post-processing, and the T_l are independent under both
laws (disjoint rows, disjoint B's): a product of 1-D pairs (Σ_w P(W_l = w) N(w, 1), N(0, 1)) with
W_l = Σ_k a_k B_k, a_k = ⟨u_l, A e_k⟩/‖u_l‖ >= 0. Atoms are merged onto the SMALLEST atom of each
grid cell and tails rounded down (a dominated pair, Cor 4.4), and the product's δ is the lower end
of the PLD engine's bracket. L = bandwidth keeps one column per block (exactly the Poisson run of
those columns); L = N is the projection of the whole pair. Where the participating columns are
mutually orthogonal (disjoint supports: C = I, or b-banded C with b groups) the pair IS the Poisson
run of their norms on both sides (:func:`exact_norms`).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from verifier._types import Direction
from verifier._validation import check_open_unit
from verifier.errors import InvalidArgument
from verifier.matrix.conditional import StepPair, compose_step_pairs, rounded_step_pair

__all__ = [
    "CITATION_MMCC",
    "CITATION_BLOCKS",
    "MMCC_STEP",
    "Steps",
    "scaled",
    "participation",
    "exact_norms",
    "posterior_threshold",
    "mmcc_steps",
    "mmcc_pld",
    "block_lengths",
    "block_pairs",
    "block_pld",
]

CITATION_MMCC = (
    "MMCC (Choquette-Choo, Ganesh, Steinke & Thakurta, ICLR 2024): conditional composition Thm 3.1 with "
    "per-step Gaussian-mixture pairs (Cor 4.4); posterior tail bound with a union-bound schedule derived in "
    "proofs/mmcc_posterior.py; PLD composition"
)
CITATION_BLOCKS = "block projection of the attained MMCC pair (post-processing of independent row blocks), derived lower bound"

#: Cells of the grid the REMOVE tail's weighted Bernoulli sum is rounded up to.
_TAIL_CELLS = 512
#: Largest number of atoms kept in a per-step mixing law (merged onto grid cells beyond it).
_ATOMS = 12
#: Grid step (loss units) of the per-step PLDs: coarser than matrix-cc's, as mixtures cost one ball
#: evaluation per grid point and atom; the bracket's width shows its effect.
MMCC_STEP = 2.0**-8
#: Bisection steps for the REMOVE threshold τ.
_BISECTION = 60
#: Relative margin by which the floating-point tail sum must undercut β.
_MARGIN = 1e-9


@dataclass(frozen=True)
class Steps:
    """The per-step pairs of one group's run (StepPair → count), the number M of posterior bounds
    they used (each failing with probability δ_E/M) and whether every step was exact."""

    pairs: Counter
    bounds: int

    @property
    def exact(self) -> bool:
        return self.bounds == 0


def scaled(dense: npt.NDArray[np.float64], sensitivity: float, sigma: float) -> npt.NDArray[np.float64]:
    """A = Δ·C/σ, rounded up one ulp (a larger A only enlarges every UPPER quantity below)."""
    a = np.asarray(dense, dtype=float) * (sensitivity / sigma)
    return np.nextafter(a, np.inf) * (a > 0)


def participation(size: int, groups: int, group: int) -> npt.NDArray[np.int64]:
    """The steps group ``group`` takes part in: group, group + b, … (< N)."""
    return np.arange(group, size, groups)


def _supports(a: npt.NDArray[np.float64], columns: npt.NDArray[np.int64]) -> list[tuple[int, int]]:
    """(first, last) row with a positive entry of each column ((j, j − 1) for a zero column)."""
    out = []
    for j in columns:
        rows = np.flatnonzero(a[:, j] > 0)
        out.append((int(rows[0]), int(rows[-1])) if rows.size else (int(j), int(j) - 1))
    return out


def exact_norms(a: npt.NDArray[np.float64], columns: npt.NDArray[np.int64]) -> list[float] | None:
    """The column norms ‖A e_j‖ (j ∈ ``columns``) when those columns have pairwise disjoint supports
    (then the pair is exactly the Poisson run of the norms: rotate onto the orthogonal columns), else None."""
    spans = sorted(s for s in _supports(a, columns) if s[1] >= s[0])
    if any(later[0] <= earlier[1] for earlier, later in zip(spans, spans[1:])):
        return None
    return [float(np.sqrt(np.sum(a[:, j] ** 2))) for j in columns]


def _cell_law(values: npt.NDArray[np.float64], probs: npt.NDArray[np.float64], cells: int, upward: bool):
    """Merge the atoms of a finite law onto at most ``cells`` grid cells: each cell's mass moves onto
    its largest atom (``upward``: a stochastically larger law) or its smallest (a smaller one)."""
    order = np.argsort(values, kind="stable")
    values, probs = values[order], probs[order]
    top = float(values[-1])
    if top > 0 and len(values) > cells:
        key = np.floor(values / (top / cells)).astype(np.int64)
    else:
        key = np.searchsorted(np.unique(values), values)
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    ends = np.r_[starts[1:], len(values)] - 1
    return (values[ends] if upward else values[starts]), np.add.reduceat(probs, starts)


def _sum_law(terms: list[tuple[float, float]], upward: bool, cells: int = _ATOMS):
    """The law of Σ c·Bernoulli(p) over independent ``terms`` (c >= 0), atoms merged by
    :func:`_cell_law` whenever more than ``cells`` accumulate; sums rounded one ulp toward the side."""
    values = np.zeros(1)
    probs = np.ones(1)
    toward = np.inf if upward else 0.0
    for c, p in terms:
        values = np.concatenate([values, np.nextafter(values + c, toward)])
        probs = np.concatenate([probs * (1.0 - p), probs * p])
        if len(values) > cells:
            values, probs = _cell_law(values, probs, cells, upward)
    return _cell_law(values, probs, cells, upward)


def _law_pair(values: npt.NDArray[np.float64], probs: npt.NDArray[np.float64], upward: bool) -> StepPair:
    """The per-step pair of a mixing law: tails rounded up (``upward``) or down by 2^-40 relative."""
    tails = np.cumsum(probs[::-1])[::-1]
    if upward:
        return rounded_step_pair(values, tails)
    kept = [0] + [j for j in range(1, len(values)) if tails[j] * (1 - 2.0**-40) > 0]
    lowered = [1.0] + [min(1.0, float(tails[j]) * (1 - 2.0**-40)) for j in kept[1:]]
    return StepPair(tuple(float(values[j]) for j in kept), tuple(lowered))


def posterior_threshold(direction: Direction, v2: float, weights: npt.NDArray[np.float64], rate: float, beta: float) -> float:
    """τ with P(L_j > τ) <= β under the first argument of the hockey stick (module doc, step 2):
    ``v2`` = ‖v‖², ``weights`` the w_k (REMOVE; the B_k's weights in ⟨y, v⟩, including w_j = ‖v‖²)."""
    from scipy.special import log_ndtr, ndtri

    s = math.sqrt(v2)
    z = -float(ndtri(beta))  # Φ̄⁻¹(β)
    base = -v2 / 2 + s * z * (1 + _MARGIN) + _MARGIN
    w = weights[weights > 0]
    if direction is Direction.ADD or w.size == 0:
        return base
    h = float(w.sum()) / _TAIL_CELLS
    steps = np.ceil(w / h).astype(np.int64)
    pmf = np.ones(1)
    for n in steps:
        grown = np.zeros(len(pmf) + n)
        grown[: len(pmf)] += pmf * (1 - rate)
        grown[n:] += pmf * rate
        pmf = grown
    atoms = h * np.arange(len(pmf))
    keep = pmf > 0
    atoms, log_pmf = atoms[keep], np.log(pmf[keep])
    log_beta = math.log(beta) + math.log1p(-_MARGIN)

    def holds(t: float) -> bool:
        terms = log_pmf + log_ndtr(-(t + v2 / 2 - atoms) / s)
        top = float(terms.max())
        return top + math.log(float(np.exp(terms - top).sum())) <= log_beta

    lo, hi = base, base + float(atoms[-1]) + s
    while not holds(hi):
        hi += s + float(atoms[-1])
    for _ in range(_BISECTION):
        mid = (lo + hi) / 2
        if holds(mid):
            hi = mid
        else:
            lo = mid
    return hi


def _posterior_bound(rate: float, tau: float) -> float:
    """p̃ = q e^τ / (q e^τ + 1 − q), rounded up, at most 1."""
    if tau > 700:
        return 1.0
    odds = rate / (1 - rate) * math.exp(tau) if rate < 1 else math.inf
    return min(1.0, math.nextafter(odds / (1 + odds), 1.0) * (1 + 1e-12)) if math.isfinite(odds) else 1.0


def mmcc_steps(a: npt.NDArray[np.float64], columns: npt.NDArray[np.int64], rate: float, direction: Direction, delta_e: float) -> Steps:
    """The per-step pairs of MMCC's conditional composition for the record taking part in
    ``columns`` (module doc, UPPER steps 1–3), with failure budget ``delta_e`` over all bounds."""
    if not isinstance(direction, Direction):
        raise InvalidArgument("direction", direction, "must be Direction.ADD or Direction.REMOVE")
    budget = check_open_unit("delta_e", delta_e)
    n = a.shape[0]
    member = np.zeros(n, dtype=bool)
    member[columns] = True
    sub = a[:, columns]  # N × |J|
    # the bounds needed: (i, j) with j < i, j ∈ J, A_ij > 0 and A_{<i} e_j ≠ 0
    started = np.cumsum(sub > 0, axis=0) > 0  # started[i, k]: column k has a positive row <= i
    before = np.vstack([np.zeros((1, len(columns)), dtype=bool), started[:-1]])  # ... a positive row < i
    need = [(i, np.flatnonzero((sub[i] > 0) & (columns < i) & before[i])) for i in range(n)]
    total = sum(len(ks) for _, ks in need)
    beta = budget / total if total else budget
    gram = np.zeros((len(columns), len(columns)))
    cache: dict[tuple, float] = {}
    out: Counter = Counter()
    for i, past in need:
        current = [(float(a[i, i]), rate)] if member[i] and a[i, i] > 0 else []
        terms = []
        for k in past:
            weights = gram[:, k]
            key = (float(gram[k, k]), tuple(np.sort(weights[weights > 0])))
            if key not in cache:
                cache[key] = posterior_threshold(direction, float(gram[k, k]), weights, rate, beta)
            terms.append((float(sub[i, k]), _posterior_bound(rate, cache[key])))
        if current or terms:
            if not terms:
                pair = StepPair((0.0, current[0][0]), (1.0, rate))
            else:
                pair = _law_pair(*_sum_law(current + terms, upward=True), upward=True)
            out[pair] += 1
        gram += np.outer(sub[i], sub[i])
    return Steps(out, total)


def mmcc_pld(steps: Steps, direction: Direction, step: float = MMCC_STEP):
    """PLD bracket of the composed per-step pairs (module doc, step 4); None when nothing is released."""
    return compose_step_pairs(steps.pairs, direction, step)


def block_lengths(a: npt.NDArray[np.float64], columns: npt.NDArray[np.int64]) -> list[int]:
    """Block lengths tried by the LOWER bound: the longest column support w, 2w, 4w, … and N."""
    spans = [last - first + 1 for first, last in _supports(a, columns)]
    width = max(1, max(spans, default=1))
    n = a.shape[0]
    out = []
    length = width
    while length < n:
        out.append(length)
        length *= 2
    return out + [n]


def block_pairs(a: npt.NDArray[np.float64], columns: npt.NDArray[np.int64], rate: float, length: int) -> Counter:
    """The 1-D pairs (rounded down) of the block projection with blocks of ``length`` rows (module doc)."""
    out: Counter = Counter()
    blocks: dict[int, list[int]] = {}
    for j, (first, last) in zip(columns, _supports(a, columns)):
        if last >= first and first // length == last // length:
            blocks.setdefault(first // length, []).append(int(j))
    for chosen in blocks.values():
        u = a[:, chosen].sum(axis=1)
        norm = float(np.sqrt(u @ u))
        coefficients = [float(np.nextafter(u @ a[:, k] / norm, 0.0)) for k in chosen]
        values, probs = _sum_law([(c, rate) for c in coefficients], upward=False, cells=2 * _ATOMS)
        out[_law_pair(values, probs, upward=False)] += 1
    return out


def block_pld(pairs: Counter, direction: Direction, step: float = MMCC_STEP):
    """PLD bracket of the product of the block pairs; its lower end bounds the pair's δ from below."""
    return compose_step_pairs(pairs, direction, step)
