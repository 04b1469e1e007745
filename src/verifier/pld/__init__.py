"""Discretised privacy-loss distributions with one-sided (dominating / dominated) guarantees,
rigorous FFT composition, Poisson subsampling, and δ(ε) / ε(δ) queries."""

from verifier.pld.bracket import PLDBracket
from verifier.pld.construction import MAX_GRID, pld_from_pair
from verifier.pld.distribution import DEFAULT_TAIL_MASS, DiscretePLD, compose
from verifier.pld.power import self_compose
from verifier.pld.schemes import DEFAULT_STEP, builder_for, pair_bracket, register_builder, scheme_pld
from verifier.pld.subsample import subsample

# Importing the allocation module registers its scheme builder, so scheme_pld(Allocation(...)) works
# for every caller of this package, not only for those that imported the module themselves.
from verifier.pld import allocation as _allocation  # noqa: E402,F401

__all__ = [
    "DEFAULT_STEP",
    "DEFAULT_TAIL_MASS",
    "MAX_GRID",
    "DiscretePLD",
    "PLDBracket",
    "builder_for",
    "compose",
    "pair_bracket",
    "pld_from_pair",
    "register_builder",
    "scheme_pld",
    "self_compose",
    "subsample",
]
