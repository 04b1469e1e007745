"""Audit of dp_accounting: its RDP and PLD accountants on every event class (and, beside them, Opacus's
RDP, PRV and GDP accountants on the add/remove cells an Opacus history can express:
:func:`verifier.adapters.opacus.history_of_dp_event`), under the
neighbouring relations verifier models (``ADD_OR_REMOVE_ONE``; ``REPLACE_ONE``; ``REPLACE_SPECIAL``,
a record replaced by one that contributes nothing, which for these additive mechanisms is the
add/remove shift), on a grid per class: Gaussian and Laplace steps and compositions, Poisson
sampling (both relations), fixed-size batches (replace-one) at batch fractions from 0.1% to 100%,
randomized response, discrete Laplace, discrete Gaussians (dp_accounting 0.6 has no DiscreteGaussianDpEvent: its
PLD of the discrete Gaussian mechanism, ``from_discrete_gaussian_mechanism``, is judged on the event's claim), mixtures of Gaussians, tree aggregation, truncated Poisson
sampling (both relations), the non-private release, zCDP steps (alone, (ξ, ρ), composed with DP-SGD) and repeat-and-select (DP-SGD, a Gaussian,
a zCDP step; logarithmic, geometric, shape-2.5 and Poisson numbers of runs).

The events are dp_accounting's own; each is turned into the claim verifier decides by
:func:`verifier.adapters.from_dp_event`, so the audit and a user's certify run read the same
model. Classes verifier refuses (:data:`verifier.adapters.dp_event.REFUSED`) are listed with the
reason, and so is ``SampledWithReplacementDpEvent``, which verifier bounds but no accountant of
dp_accounting 0.6 accepts (nothing to audit).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from verifier.adapters.dp_event import REFUSED, claim_object_from_dp_event
from verifier.adapters.opacus import history_of_dp_event
from verifier.audit import AuditRow, catalogue_rows, judge, require

__all__ = ["rows", "events", "judge_event", "tradeoff_rows", "TRUNCATED_CELLS", "TRUNCATED_QUICK", "NOT_ACCEPTED", "TRADEOFF_CELLS", "TRADEOFF_FPRS", "TRADEOFF_DELTAS", "TRADEOFF_DISCRETIZATION"]

DELTA = 1e-5

#: (dataset size n, rate q, largest batch B, σ, steps) of the truncated-Poisson cells: truncation
#: binds (nq above B) in the first and last, rarely in the second. verifier's PLD bracket of a cell
#: takes minutes under add/remove (a labelled mixture of ~10 subsampled Gaussians per step).
TRUNCATED_CELLS = ((1000, 0.05, 40, 2.0, 10), (10_000, 0.01, 150, 1.0, 100), (1000, 0.05, 40, 1.0, 100))
#: The --quick cell.
TRUNCATED_QUICK = ((1000, 0.05, 40, 2.0, 10),)
#: Classes verifier bounds that no accountant of dp_accounting 0.6 accepts, with the reason.
NOT_ACCEPTED = {
    "SampledWithReplacementDpEvent": "verifier bounds it (with_replacement, replace-one) but neither the RDP nor the PLD "
    "accountant of dp_accounting 0.6 accepts it: nothing to audit",
}


def events(quick: bool) -> list[tuple[str, Any]]:
    """(relation, event) cells of the grid; relation is verifier's name or ``replace_special``."""
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
    cells += [("add_or_remove", E.SelfComposedDpEvent(E.LaplaceDpEvent(b), t)) for b, t in ([(2.0, 10)] if quick else [(2.0, 10), (10.0, 100)])]
    cells += [("add_or_remove", E.SelfComposedDpEvent(E.PoissonSampledDpEvent(0.1, E.LaplaceDpEvent(1.0)), 100))]
    cells += [("replace_one", E.SelfComposedDpEvent(E.RandomizedResponseDpEvent(p, k), t)) for p, k, t in ([(0.5, 2, 10)] if quick else [(0.5, 2, 10), (0.2, 10, 5), (0.9, 4, 100)])]
    cells += [("add_or_remove", E.SelfComposedDpEvent(E.DiscreteLaplaceDpEvent(a, c), t)) for a, c, t in ([(0.5, 1, 10)] if quick else [(0.5, 1, 10), (0.1, 3, 20)])]
    mixtures = [] if quick else [(1.0, [0.0, 1.0, 2.0], [0.25, 0.5, 0.25], 10), (2.0, [0.5, 1.0], [0.9, 0.1], 100)]  # ~10 s each in dp_accounting
    cells += [("add_or_remove", E.SelfComposedDpEvent(E.MixtureOfGaussiansDpEvent(s, c, p), t)) for s, c, p, t in mixtures]
    cells += [("replace_special", E.SelfComposedDpEvent(E.SingleEpochTreeAggregationDpEvent(s, steps), 3)) for s, steps in ([(2.0, 100)] if quick else [(2.0, 100), (5.0, [16, 64])])]
    cells += [(relation, E.NonPrivateDpEvent()) for relation in ("add_or_remove", "replace_one")]
    cells += [("add_or_remove", E.ZCDpEvent(0.5)), ("add_or_remove", E.SelfComposedDpEvent(E.ZCDpEvent(0.05, 0.01), 10))]
    if not quick:
        cells.append(("replace_one", E.SelfComposedDpEvent(E.ZCDpEvent(0.05), 10)))
        cells.append(("add_or_remove", E.ComposedDpEvent([E.ZCDpEvent(0.1), E.SelfComposedDpEvent(E.PoissonSampledDpEvent(0.01, E.GaussianDpEvent(1.0)), 1000)])))
    dpsgd = E.SelfComposedDpEvent(E.PoissonSampledDpEvent(0.01, E.GaussianDpEvent(1.0)), 1000)
    selects = [(dpsgd, 10.0, 1.0)] if quick else [(dpsgd, 10.0, 1.0), (dpsgd, 10.0, 0.0), (E.GaussianDpEvent(4.0), 5.0, 2.5), (E.ZCDpEvent(0.02), 20.0, 1.0)]
    selects += [] if quick else [(dpsgd, 10.0, math.inf), (E.GaussianDpEvent(2.0), 10.0, math.inf)]  # Poisson runs (Thm 6)
    cells += [("add_or_remove", E.RepeatAndSelectDpEvent(run, mean, shape)) for run, mean, shape in selects]
    if hasattr(E, "DiscreteGaussianDpEvent"):  # dp_accounting's main branch (0.6: :func:`_discrete_gaussian_pld`)
        cells.append(("add_or_remove", E.SelfComposedDpEvent(E.DiscreteGaussianDpEvent(2.0, 1, 1), 10)))
    if hasattr(E, "EpsilonDeltaDpEvent"):  # dp_accounting's main branch
        cells.append(("add_or_remove", E.SelfComposedDpEvent(E.EpsilonDeltaDpEvent(0.5, 1e-6), 10)))
    if hasattr(E, "ExponentialMechanismDpEvent"):  # main branch: EM as a generic ε-DP step, PF as Laplace(1/ε)
        cells += [("add_or_remove", E.SelfComposedDpEvent(E.ExponentialMechanismDpEvent(1.0), 3)), ("add_or_remove", E.PermuteAndFlipDpEvent(1.0))]
    return cells


def _relation(name: str):
    from dp_accounting import NeighboringRelation

    return {"add_or_remove": NeighboringRelation.ADD_OR_REMOVE_ONE, "replace_one": NeighboringRelation.REPLACE_ONE,
            "replace_special": NeighboringRelation.REPLACE_SPECIAL}[name]


def _accountants(relation: str) -> dict:
    from dp_accounting.pld import pld_privacy_accountant
    from dp_accounting.rdp import rdp_privacy_accountant

    rel = _relation(relation)
    return {
        "RdpAccountant": lambda: rdp_privacy_accountant.RdpAccountant(neighboring_relation=rel),
        "PLDAccountant": lambda: pld_privacy_accountant.PLDAccountant(rel),
    }


def _group(event: Any) -> str:
    """The event class a cell exercises (below the composition and sampling wrappers, except
    the sampling classes themselves)."""
    name = type(event).__name__
    if name == "SelfComposedDpEvent":
        return _group(event.event)
    if name == "PoissonSampledDpEvent":
        return f"PoissonSampledDpEvent({type(event.event).__name__})"
    return name


def rows(examples: int = 0, quick: bool = False) -> tuple[list[AuditRow], list[str], list[tuple[str, str]]]:
    require("dp_accounting", "dp-accounting")
    from dp_accounting import dp_event as E

    out: list[AuditRow] = []
    notes = ["REPLACE_SPECIAL is audited as add/remove (a record replaced by one that contributes nothing) for tree aggregation only"]
    refused: dict[str, set[str]] = {}
    cells = events(quick)
    for n, q, batch, sigma, steps in TRUNCATED_QUICK if quick else TRUNCATED_CELLS:
        truncated = E.SelfComposedDpEvent(E.TruncatedSubsampledGaussianDpEvent(n, q, batch, sigma), steps)
        cells += [("add_or_remove", truncated), ("replace_one", truncated)]
    for relation, event in cells:
        out += judge_event(relation, event, _group(event), refused)
    if not hasattr(E, "DiscreteGaussianDpEvent"):
        out += [_discrete_gaussian_pld(sigma, steps) for sigma, steps in ([(2.0, 10)] if quick else [(2.0, 10), (0.5, 5), (10.0, 100)])]
    notes += [f"{who} refuses {', '.join(sorted(kinds))} events" for who, kinds in sorted(refused.items())]
    notes.append("Opacus's RDP, PRV and GDP accountants are run on the add/remove cells an Opacus history expresses (Poisson-sampled or "
                 "full-batch Gaussian phases; GDP on one phase only: it reads the last)" if _opacus_installed() else
                 "opacus is not installed: its accountants were not run on the cells a history expresses")
    unjudged = [(name, f"refused by verifier: {why}") for name, why in sorted(REFUSED.items())] + sorted(NOT_ACCEPTED.items())
    out += tradeoff_rows(quick)
    if not hasattr(_pld_class(), "get_true_positive_rates"):
        notes.append("this dp_accounting has no get_true_positive_rates / get_gdp_parameter_estimate (main after 0.6.0): not audited")
    if examples:
        out += _hypothesis_rows(examples)
    return out, notes, unjudged


def _pld_class():
    from dp_accounting.pld import privacy_loss_distribution

    return privacy_loss_distribution.PrivacyLossDistribution


#: (σ, sampling probability, steps) of the trade-off cells: one Gaussian step (symmetric PLD), and
#: Poisson-sampled steps whose PLD is kept whole (add/remove) or one-sided (add-only, remove-only:
#: ``PrivacyLossDistribution(pmf)``, which dp_accounting reads as symmetric).
TRADEOFF_CELLS = ((1.0, 1.0, 1), (2.0, 0.1, 10))
#: False-positive rates at which the TPR API and the GDP estimate's curve Φ(Φ⁻¹(α) + μ) are judged.
TRADEOFF_FPRS = (1e-3, 1e-2, 0.1)
#: The API's grid, coarser than its default (3000 δ's, 1e-4 discretisation: ~80 s a call): every
#: grid gives an upper bound by its docstring, so soundness does not depend on it.
TRADEOFF_DELTAS = 300
TRADEOFF_DISCRETIZATION = 1e-3


def tradeoff_rows(quick: bool) -> list[AuditRow]:
    """dp_accounting main's ``get_true_positive_rates`` (an upper bound on TPR by its docstring) and
    ``get_gdp_parameter_estimate`` (μ, "not guaranteed to be an upper or lower bound": judged as the
    claim that the attacker's TPR is at most Φ(Φ⁻¹(α) + μ)) against verifier's TPR bracket in the
    PLD's direction; none where the installed dp_accounting lacks them (0.6)."""
    import numpy as np
    from scipy import stats

    from verifier.audit import judge_tpr

    if not hasattr(_pld_class(), "get_true_positive_rates"):
        return []
    from dp_accounting.pld import privacy_loss_distribution as P

    deltas = np.concatenate(([0.0], np.logspace(-13, 0, TRADEOFF_DELTAS)))
    out = []
    for sigma, rate, steps in TRADEOFF_CELLS[:1] if quick else TRADEOFF_CELLS:
        full = P.from_gaussian_mechanism(sigma, sampling_prob=rate, value_discretization_interval=TRADEOFF_DISCRETIZATION)
        full = full.self_compose(steps) if steps > 1 else full
        scheme = {"name": "single"} if rate == 1.0 else {"name": "poisson", "rate": rate, "steps": steps}
        plds = [("add_or_remove", full)]
        if rate < 1.0:  # one-sided PLDs (protected fields: dp_accounting offers no public accessor)
            plds += [("remove", P.PrivacyLossDistribution(full._pmf_remove)), ("add", P.PrivacyLossDistribution(full._pmf_add))]  # noqa: SLF001
        for relation, pld in plds:
            claim = {"mechanism": {"name": "gaussian", "sigma": sigma}, "scheme": scheme, "neighboring": relation}
            group = f"PLD.get_true_positive_rates ({relation})"
            for fpr in TRADEOFF_FPRS:
                tpr = float(pld.get_true_positive_rates(fpr, deltas=deltas))
                out.append(replace(judge_tpr("dp_accounting PLD.get_true_positive_rates", claim, fpr, tpr), group=group))
            mu = float(pld.get_gdp_parameter_estimate(np.array(TRADEOFF_FPRS), deltas=deltas))
            note = f"mu = {mu:.6g} (an estimate by its docstring), TPR = Phi(Phi^-1(FPR) + mu)"
            for fpr in TRADEOFF_FPRS:
                tpr = float(stats.norm.cdf(stats.norm.ppf(fpr) + mu))
                row = judge_tpr("dp_accounting PLD.get_gdp_parameter_estimate", claim, fpr, tpr, note=note)
                out.append(replace(row, group=f"PLD.get_gdp_parameter_estimate ({relation})"))
    return out


def _discrete_gaussian_pld(sigma: float, steps: int) -> AuditRow:
    """dp_accounting 0.6's PLD of ``steps`` discrete Gaussian steps (σ, sensitivity 1; its default
    pessimistic estimate), judged on the claim of the main branch's event (dimension 1)."""
    from dp_accounting.pld import privacy_loss_distribution as pld

    event = {"class_name": "SelfComposedDpEvent", "count": steps,
             "event": {"class_name": "DiscreteGaussianDpEvent", "sigma": sigma, "sensitivity": 1.0, "dimension": 1}}
    claim = claim_object_from_dp_event(event, epsilon=1.0, delta=DELTA)
    eps = float(pld.from_discrete_gaussian_mechanism(sigma).self_compose(steps).get_epsilon_for_delta(DELTA))
    return judge("dp_accounting PLD (from_discrete_gaussian_mechanism)", claim, eps, group="DiscreteGaussianDpEvent")


def judge_event(relation: str, event: Any, group: str, refused: dict[str, set[str]]) -> list[AuditRow]:
    """dp_accounting's RDP and PLD accountants on ``event`` under ``relation`` (verifier's name or
    ``replace_special``), each number judged against verifier's bracket. Accountants that refuse
    the event are added to ``refused``."""
    out = []
    claim = claim_object_from_dp_event(event, epsilon=1.0, delta=DELTA, neighboring="add_or_remove" if relation == "replace_special" else relation)
    for name, make in _accountants(relation).items():
        accountant = make()
        if not accountant.supports(event):
            refused.setdefault(f"{name} ({relation})", set()).add(group)
            continue
        eps = float(accountant.compose(event).get_epsilon(DELTA))
        note = "dp_accounting's REPLACE_SPECIAL" if relation == "replace_special" else ""
        out.append(judge(f"dp_accounting {name}", claim, eps, note=note, group=group))
    history = history_of_dp_event(event) if relation == "add_or_remove" else None
    if history is not None and _opacus_installed():
        from verifier.audit.opacus import history_epsilons

        note = f"Opacus history {history}"
        out += [judge(f"opacus {name}", claim, eps, note=note, group=group) for name, eps in history_epsilons(history, DELTA).items()]
    return out


def _opacus_installed() -> bool:
    try:
        import opacus  # noqa: F401
    except ImportError:
        return False
    return True


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
