"""The ε searches that moved onto verifier.analytic._search.smallest_passing keep their side (issue
42): an UPPER end is a point where the UPPER bound on δ was evaluated at or below δ, a LOWER end a
point where the LOWER bound on δ was evaluated above it, each within the search's tolerance of the
crossing. (EpochsBound.epsilon's UPPER side is held by
tests/certify/test_shuffled_clones.py::test_gaussian_epochs_bound_composes_below_the_unamplified_one.)"""

from __future__ import annotations

import pytest

from verifier._types import Direction
from verifier.certify.methods.truncated_attained import SEARCH_TOLERANCE, delta_lower, epsilon_lower
from verifier.pairs import Gaussian
from verifier.schemes import TruncatedPoisson


@pytest.mark.parametrize("replace_one", [False, True])
def test_truncated_attained_lower_end_fails_and_its_neighbour_passes(replace_one):
    """n = 30, q = 0.2, B = 4 (truncation binds), σ = 1, 2 steps, δ = 1e-5: δ_L(ε_L) > δ (a mutant
    returning the search's passing end fails here) and δ_L(ε_L + 2·tolerance) <= δ (one that stops
    early, or at the first failing point of the growth, fails there)."""
    scheme = TruncatedPoisson(Gaussian(1.0, 2.0 if replace_one else 1.0), 30, 0.2, 4, 2, replace_one)
    end = epsilon_lower(scheme, 1e-5, Direction.REMOVE)
    assert delta_lower(scheme, end, Direction.REMOVE) > 1e-5
    assert delta_lower(scheme, end + 2 * SEARCH_TOLERANCE, Direction.REMOVE) <= 1e-5
