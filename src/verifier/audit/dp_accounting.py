"""Audit of dp_accounting: its RDP and PLD accountants under every neighbouring relation verifier
models (``ADD_OR_REMOVE_ONE``, ``REPLACE_ONE``; ``REPLACE_SPECIAL`` has no model here and is
listed as not audited), on Gaussian and Laplace steps, compositions, Poisson sampling (both
relations) and fixed-size sampling without replacement (replace-one) at batch fractions from 0.1% to 100%.

The events are dp_accounting's own (``GaussianDpEvent``, ``SelfComposedDpEvent``,
``PoissonSampledDpEvent``, ``SampledWithoutReplacementDpEvent``); each is turned into the claim
verifier decides by :func:`verifier.adapters.from_dp_event`, so the audit and a user's certify run
read the same model.
"""

from __future__ import annotations

from typing import Any

from verifier.adapters.dp_event import claim_object_from_dp_event
from verifier.audit import AuditRow, catalogue_rows, judge, require

__all__ = ["rows", "events"]

DELTA = 1e-5


def events(quick: bool) -> list[tuple[str, Any]]:
    """(relation, event) cells of the grid."""
    from dp_accounting import dp_event as E

    gauss = [1.0, 4.0] if quick else [0.5, 1.0, 2.0, 4.0]
    cells: list[tuple[str, Any]] = []
    for relation in ("add_or_remove", "replace_one"):
        cells += [(relation, E.GaussianDpEvent(s)) for s in gauss]
        cells.append((relation, E.SelfComposedDpEvent(E.GaussianDpEvent(4.0), 100)))
        if not quick:
            cells.append((relation, E.LaplaceDpEvent(1.0)))
    poisson = [(1.1, 0.01, 1000)] if quick else [(1.1, 0.01, 1000), (2.0, 0.1, 100), (4.0, 0.5, 100)]
    cells += [("add_or_remove", E.SelfComposedDpEvent(E.PoissonSampledDpEvent(q, E.GaussianDpEvent(s)), t)) for s, q, t in poisson]
    if not quick:  # replace-one under Poisson sampling (dp_accounting's PLD offers it, its RDP refuses it)
        cells += [("replace_one", E.SelfComposedDpEvent(E.PoissonSampledDpEvent(q, E.GaussianDpEvent(s)), t)) for s, q, t in poisson]
    batches = [1, 100, 1000] if quick else [1, 10, 100, 300, 500, 1000]
    for sigma in ([4.0] if quick else [1.0, 4.0]):
        for batch in batches:
            wor = E.SampledWithoutReplacementDpEvent(1000, batch, E.GaussianDpEvent(sigma))
            cells.append(("replace_one", E.SelfComposedDpEvent(wor, 100)))
    return cells


def _accountants(relation: str) -> dict:
    from dp_accounting import NeighboringRelation
    from dp_accounting.pld import pld_privacy_accountant
    from dp_accounting.rdp import rdp_privacy_accountant

    rel = {"add_or_remove": NeighboringRelation.ADD_OR_REMOVE_ONE, "replace_one": NeighboringRelation.REPLACE_ONE}[relation]
    return {
        "RdpAccountant": lambda: rdp_privacy_accountant.RdpAccountant(neighboring_relation=rel),
        "PLDAccountant": lambda: pld_privacy_accountant.PLDAccountant(rel),
    }


def rows(examples: int = 0, quick: bool = False) -> tuple[list[AuditRow], list[str]]:
    require("dp_accounting", "dp-accounting")
    out: list[AuditRow] = []
    notes = ["REPLACE_SPECIAL is not audited: verifier has no model of that relation"]
    refused: dict[str, set[str]] = {}
    for relation, event in events(quick):
        claim = claim_object_from_dp_event(event, epsilon=1.0, delta=DELTA, neighboring=relation)
        for name, make in _accountants(relation).items():
            accountant = make()
            if not accountant.supports(event):
                refused.setdefault(f"{name} ({relation})", set()).add(type(getattr(event, "event", event)).__name__)
                continue
            eps = accountant.compose(event).get_epsilon(DELTA)
            out.append(judge(f"dp_accounting {name}", claim, eps))
    notes += [f"{who} refuses {', '.join(sorted(kinds))} events" for who, kinds in sorted(refused.items())]
    if examples:
        out += _hypothesis_rows(examples)
    return out, notes


def _hypothesis_rows(examples: int) -> list[AuditRow]:
    """The catalogue on dp_accounting's add/remove accountants (Gaussian, compositions, Poisson;
    their ε(δ) and δ(ε))."""
    from dp_accounting import dp_event as E

    from verifier.properties.accountant import Accountant
    from verifier.schemes import Composed, Poisson, Single

    def event(scheme):
        if isinstance(scheme, Single):
            return E.GaussianDpEvent(scheme.pair.sigma / scheme.pair.sensitivity)
        if isinstance(scheme, Composed):
            return E.SelfComposedDpEvent(event(scheme.scheme), scheme.times)
        return E.SelfComposedDpEvent(E.PoissonSampledDpEvent(scheme.rate, event(Single(scheme.pair))), scheme.steps)

    out = []
    for name, make in _accountants("add_or_remove").items():
        def epsilon(scheme, delta, make=make):
            return make().compose(event(scheme)).get_epsilon(delta)

        def delta_at(scheme, eps, make=make):
            return make().compose(event(scheme)).get_delta(eps)

        accountant = Accountant(f"dp_accounting {name}", epsilon, schemes=(Single, Composed, Poisson), delta=delta_at)
        out += catalogue_rows(accountant, examples)
    return out
