"""Properties every correct DP accountant satisfies, checked with Hypothesis against verifier's
rigorous bounds: the catalogue (:mod:`.catalogue`), the accountant under test and verifier's oracle
(:mod:`.accountant`), strategies (:mod:`verifier.strategies`, needs Hypothesis), the runner and the pytest
plugin (:mod:`.plugin`, registered as the ``pytest11`` entry point ``verifier``)."""

from verifier.properties.accountant import Accountant, Case, certify_command, claim_epsilon, claim_for, rigorous_epsilon
from verifier.properties.catalogue import CATALOGUE, Finding, Property, PropertyFailure, by_name

__all__ = [
    "Accountant",
    "Case",
    "certify_command",
    "claim_for",
    "rigorous_epsilon",
    "claim_epsilon",
    "CATALOGUE",
    "Finding",
    "Property",
    "PropertyFailure",
    "by_name",
]
