"""Public Hypothesis strategies for pairs, schemes, cases and claims in the ranges accountants are used in.

Ranges (DP-SGD and aggregation practice): σ and Laplace scale in [0.5, 8] on a grid of 1/4,
δ = 10^-e for e in 3…9, composition up to 200 steps, Poisson rates in [0.001, 1] on a grid of 1/1000
over up to 256 steps, random allocation up to 12 steps with k <= 3. Parameters live on grids so that
a failing example shrinks to a small readable counterexample (σ = 0.5, one step, δ = 1e-3) in few
distinct (and so few expensive) oracle calls.

Steering: the catalogue's soundness property (:mod:`verifier.properties.catalogue`) calls
``hypothesis.target`` with the accountant's shortfall below verifier's rigorous lower bound, and
``verifier check-bound`` with the violation, so a run drawn from these strategies moves toward the
largest claim/lower-bound gap.

Requires Hypothesis (installed with the ``test`` extra).
"""

from __future__ import annotations

from typing import Sequence

from hypothesis import strategies as st

from verifier.certify.claim import Claim
from verifier.pairs import DominatingPair, Gaussian, Laplace
from verifier.properties.accountant import Accountant, Case, claim_for
from verifier.schemes import Allocation, Composed, Poisson, Scheme, Single

__all__ = ["pairs", "schemes", "deltas", "epsilons", "orders", "cases", "claims", "NOISE", "MAX_TIMES", "MAX_POISSON_STEPS", "MAX_ALLOCATION_STEPS"]

#: Range of σ (Gaussian) and scale (Laplace), drawn on a grid of 1/4.
NOISE = (0.5, 8.0)
#: Largest composition, Poisson and allocation step counts drawn (kept small enough that verifier's
#: bracket takes well under a second for each example).
MAX_TIMES, MAX_POISSON_STEPS, MAX_ALLOCATION_STEPS = 200, 256, 12


def pairs(kinds: Sequence[type] = (Gaussian,)) -> st.SearchStrategy[DominatingPair]:
    """Gaussian(σ) and Laplace(scale) pairs of sensitivity 1, noise in :data:`NOISE`."""
    noise = st.integers(int(4 * NOISE[0]), int(4 * NOISE[1])).map(lambda i: i / 4)
    options = {Gaussian: noise.map(Gaussian), Laplace: noise.map(Laplace)}
    chosen = [options[k] for k in kinds if k in options]
    if not chosen:
        raise ValueError(f"no strategy for pair kinds {kinds} (available: Gaussian, Laplace)")
    return st.one_of(*chosen)


@st.composite
def _allocation(draw: st.DrawFn, pair: DominatingPair) -> Allocation:
    steps = draw(st.integers(1, MAX_ALLOCATION_STEPS))
    return Allocation(pair, steps, k=draw(st.integers(1, min(3, steps))))


def schemes(kinds: Sequence[type] = (Single, Composed, Poisson), pair_kinds: Sequence[type] = (Gaussian,)) -> st.SearchStrategy[Scheme]:
    """Schemes of the given classes over :func:`pairs` (``Composed`` is of a ``Single`` step)."""
    build = {
        Single: lambda p: st.just(Single(p)),
        Composed: lambda p: st.integers(1, MAX_TIMES).map(lambda t: Composed(Single(p), t)),
        Poisson: lambda p: st.builds(Poisson, st.just(p), st.integers(1, 1000).map(lambda i: i / 1000), st.integers(1, MAX_POISSON_STEPS)),
        Allocation: _allocation,
    }
    chosen = [k for k in kinds if k in build]
    if not chosen:
        raise ValueError(f"no strategy for scheme kinds {kinds}")
    return st.tuples(pairs(pair_kinds), st.sampled_from(chosen)).flatmap(lambda pk: build[pk[1]](pk[0]))


def deltas() -> st.SearchStrategy[float]:
    """δ = 10^-e, e in 3…9 (shrinks to 1e-3)."""
    return st.integers(3, 9).map(lambda e: 10.0**-e)


def cases(accountant: Accountant, kinds: Sequence[type] | None = None) -> st.SearchStrategy[Case]:
    """Cases the accountant accepts (restricted to the scheme classes ``kinds`` when given)."""
    allowed = [k for k in accountant.schemes if kinds is None or k in kinds]
    return st.builds(Case, schemes(allowed, accountant.pairs), deltas(), epsilons(), orders())


def epsilons() -> st.SearchStrategy[float]:
    """ε in [0, 10] on a grid of 1/4 (shrinks to 0)."""
    return st.integers(0, 40).map(lambda i: i / 4)


def orders() -> st.SearchStrategy[float]:
    """Rényi orders α in [1.5, 32] on a grid of 1/2 (shrinks to 1.5)."""
    return st.integers(3, 64).map(lambda i: i / 2)


def claims(kinds: Sequence[type] = (Single, Composed, Poisson), neighboring: str = "add_or_remove") -> st.SearchStrategy[Claim]:
    """Valid claims: a scheme, a δ and an ε in [0.01, 20]."""
    return st.builds(
        lambda scheme, delta, epsilon: claim_for(scheme, neighboring, epsilon, delta),
        schemes(kinds),
        deltas(),
        st.floats(0.01, 20.0),
    )
