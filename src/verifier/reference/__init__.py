"""Slow, trusted references: privacy quantities recomputed from their definitions in mpmath.

Tests hold the fast code against these (a certifier paranoid mode is planned); hot paths never call
them.  See :mod:`verifier.reference.pairs` for conventions (directions, pairs, precision).
"""

from verifier.reference import pairs as _pairs
from verifier.reference.pairs import *  # noqa: F403  (the package re-exports the pair references)

__all__ = list(_pairs.__all__)
