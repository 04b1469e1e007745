"""Audit of dp_accounting: its RDP and PLD accountants on every event class (and, beside them, Opacus's
RDP, PRV and GDP accountants on the add/remove cells an Opacus history can express:
:func:`verifier.adapters.opacus.history_of_dp_event`), under the
neighbouring relations verifier models (``ADD_OR_REMOVE_ONE``; ``REPLACE_ONE``; ``REPLACE_SPECIAL``,
a record replaced by one that contributes nothing, which for these additive mechanisms is the
add/remove shift), on a grid per class: Gaussian and Laplace steps and compositions, Poisson
sampling (both relations), fixed-size batches (replace-one) at batch fractions from 0.1% to 100%,
randomized response, discrete Laplace, mixtures of Gaussians, tree aggregation, the non-private
release, zCDP steps (alone, (ξ, ρ), composed with DP-SGD) and repeat-and-select (DP-SGD, a Gaussian,
a zCDP step; logarithmic, geometric and shape-2.5 numbers of runs).

The events are dp_accounting's own; each is turned into the claim verifier decides by
:func:`verifier.adapters.from_dp_event`, so the audit and a user's certify run read the same
model. Classes verifier refuses (:data:`verifier.adapters.dp_event.REFUSED`) are listed with the
reason, except ``TruncatedSubsampledGaussianDpEvent``: its numbers are held against a rigorous
LOWER bound (:func:`truncated_inclusion_rate`), which can find them unsound but never sound-and-tight.
"""

from __future__ import annotations

from typing import Any

from flint import arb

from verifier._directed import arb_bound, with_precision
from verifier._types import Bracket, Side
from verifier.adapters.dp_event import REFUSED, claim_object_from_dp_event
from verifier.adapters.opacus import history_of_dp_event
from verifier.audit import AuditRow, catalogue_rows, judge, require
from verifier.certify.claim import parse_claim
from verifier.certify.verdict import certify
from verifier.properties.accountant import certify_command, claim_epsilon
from verifier.properties.catalogue import SOUNDNESS_RTOL

__all__ = ["rows", "events", "judge_event", "truncated_inclusion_rate", "TRUNCATED_CELLS", "TRUNCATED_QUICK"]

DELTA = 1e-5

#: (dataset size n, rate q, largest batch B, σ, steps) of the truncated-Poisson cells: truncation
#: binds (nq near or above B) in the first two, rarely in the third.
TRUNCATED_CELLS = ((1000, 0.05, 40, 1.0, 100), (10_000, 0.01, 90, 2.0, 500), (10_000, 0.01, 150, 1.0, 100))
#: The --quick cell (about a second in dp_accounting's PLD).
TRUNCATED_QUICK = ((1000, 0.05, 40, 2.0, 10),)


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
    cells += [("add_or_remove", E.RepeatAndSelectDpEvent(run, mean, shape)) for run, mean, shape in selects]
    if hasattr(E, "EpsilonDeltaDpEvent"):  # dp_accounting's main branch
        cells.append(("add_or_remove", E.SelfComposedDpEvent(E.EpsilonDeltaDpEvent(0.5, 1e-6), 10)))
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
    notes += [f"{who} refuses {', '.join(sorted(kinds))} events" for who, kinds in sorted(refused.items())]
    notes.append("Opacus's RDP, PRV and GDP accountants are run on the add/remove cells an Opacus history expresses (Poisson-sampled or "
                 "full-batch Gaussian phases; GDP on one phase only: it reads the last)" if _opacus_installed() else
                 "opacus is not installed: its accountants were not run on the cells a history expresses")
    unjudged = [(name, f"refused by verifier: {why}") for name, why in sorted(REFUSED.items()) if name != "TruncatedSubsampledGaussianDpEvent"]
    if examples:
        out += _hypothesis_rows(examples)
    return out, notes, unjudged


def judge_event(relation: str, event: Any, group: str, refused: dict[str, set[str]]) -> list[AuditRow]:
    """dp_accounting's RDP and PLD accountants on ``event`` under ``relation`` (verifier's name or
    ``replace_special``), each number judged against verifier's bracket; a truncated-Poisson event
    against the attained lower bound (:func:`truncated_inclusion_rate`). Accountants that refuse
    the event are added to ``refused``."""
    out = []
    truncated = _truncated(event)
    claim = None if truncated else claim_object_from_dp_event(event, epsilon=1.0, delta=DELTA, neighboring="add_or_remove" if relation == "replace_special" else relation)
    for name, make in _accountants(relation).items():
        accountant = make()
        if not accountant.supports(event):
            refused.setdefault(f"{name} ({relation})", set()).add(group)
            continue
        eps = float(accountant.compose(event).get_epsilon(DELTA))
        if truncated:
            out.append(_truncated_row(f"dp_accounting {name}", relation, truncated, eps, group))
        else:
            note = "dp_accounting's REPLACE_SPECIAL" if relation == "replace_special" else ""
            out.append(judge(f"dp_accounting {name}", claim, eps, note=note, group=group))
    history = history_of_dp_event(event) if relation == "add_or_remove" and claim is not None else None
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


def _truncated(event: Any) -> tuple[Any, int] | None:
    """(TruncatedSubsampledGaussianDpEvent, steps) for it or its self-composition, else None."""
    count = 1
    while type(event).__name__ == "SelfComposedDpEvent":
        count *= event.count
        event = event.event
    return (event, count) if type(event).__name__ == "TruncatedSubsampledGaussianDpEvent" else None


def truncated_inclusion_rate(dataset_size: int, rate: float, batch: int) -> float:
    """r = q·E[min(1, B/(1 + K))], K ~ Binomial(n − 1, q), rounded DOWN: the probability that the
    record lands in the truncated batch (Poisson sampling at rate q, then a uniform subset of B of
    the sampled records when more are sampled; dataset size n with the record).

    On the dataset where every other record is 0 (a clipped record of norm 0 is allowed), the sum
    of the truncated batch is the record x when it is kept and 0 otherwise, so the step's output
    laws are (1 − r)N(0, σ²) + rN(x, σ²) against N(0, σ²) — with the record removed (add/remove) or
    replaced by a 0 record (replace-one): the Poisson-subsampled Gaussian at rate r is attained, and
    its δ(ε) (rate rounded down: δ grows with the rate) is a rigorous LOWER bound on the event's."""
    with with_precision(256):
        q, keep = arb(rate), 1 - arb(rate)
        total, term = arb(0), keep ** (dataset_size - 1)  # P(K = 0)
        for k in range(dataset_size):
            total += term * (arb(batch) / (k + 1) if k + 1 > batch else 1)
            term = term * (dataset_size - 1 - k) / (k + 1) * q / keep
        return arb_bound(q * total, Side.LOWER)


def _truncated_row(accountant: str, relation: str, truncated: tuple[Any, int], eps: float, group: str) -> AuditRow:
    """The peer's ε for ``steps`` truncated-Poisson steps against the attained lower bound of
    :func:`truncated_inclusion_rate` (UNSOUND below it, with the Poisson claim that reproduces it)."""
    step, steps = truncated
    n, q, batch, sigma = step.dataset_size, step.sampling_probability, step.truncated_batch_size, step.noise_multiplier
    rate = truncated_inclusion_rate(n, q, batch)
    claim = parse_claim({"mechanism": {"name": "gaussian", "sigma": sigma}, "scheme": {"name": "poisson", "rate": rate, "steps": steps},
                         "neighboring": "add_or_remove", "epsilon": eps, "delta": DELTA})
    bound = claim_epsilon(claim).lower
    case = f"truncated poisson(n={n}, rate={q:g}, batch={batch}, steps={steps}) gaussian(sigma={sigma:g}), δ={DELTA:g}"
    note = f"lower bound only: every other record 0, the record kept with probability r = {rate:.6g}"
    unsound = eps < bound - SOUNDNESS_RTOL * max(abs(bound), 1e-12)
    found = {"reproducer": certify_command(claim), "verdict": certify(claim).verdict.value} if unsound else {}
    return AuditRow(accountant, relation, case, eps, Bracket(bound, float("inf")), "UNSOUND" if unsound else "sound", note=note, group=group, **found)


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
