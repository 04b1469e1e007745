"""The Python entry points, as simple as the commands: ``verifier.certify``, ``verifier.epsilon``,
``verifier.delta`` and ``verifier.tradeoff``.

What they are about (``x``) is any of

- a :class:`~verifier.certify.claim.Claim`, a claim dict (the JSON of a claim file,
  :mod:`verifier.certify.claim`) or a claim file's path; ``epsilon``/``delta`` given as keywords
  state the claim (or replace the file's);
- a dp_accounting ``DpEvent``, or a dp_accounting ``PrivacyAccountant`` (its ``ledger``: the
  DpEvent of everything composed into it; :mod:`verifier.adapters.dp_event`);
- an Opacus accountant (its ``history``; :mod:`verifier.adapters.opacus`);
- a prv_accountant PRV or a list of them, with ``num_self_compositions`` (:mod:`verifier.adapters.prv`);
- nothing: the command's flags as keywords, ``verifier.certify(sigma=1.0, scheme="poisson",
  rate=0.01, steps=1000, epsilon=2.0, delta=1e-5)``; the peers' names ``noise_multiplier`` (σ),
  ``sampling_probability`` and ``sample_rate`` (λ) and ``num_steps`` (t) mean the same.

Errors and budgets are the commands': an :class:`~verifier.errors.InvalidArgument` (status 2 on
the command line) names the parameter, its value and the allowed range before anything is
computed; ``time_budget`` (seconds) is ``--time-budget``: no method of cost >= 1 starts once it
is spent and a running one is interrupted (:mod:`verifier.certify.portfolio`), so the result is
partial, never wrong (fewer bounds make a wider bracket), and ``cut`` names the methods it stopped.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from verifier._types import Bound, Bracket, Direction, Quantity
from verifier.certify.claim import Claim
from verifier.certify.portfolio import Collected
from verifier.certify.verdict import Outcome, Verdict
from verifier.errors import InvalidArgument

__all__ = ["certify", "epsilon", "delta", "tradeoff", "Certification", "Profile", "claim_of"]


@dataclass(frozen=True)
class Certification:
    """The answer to a claim: the verdict, one reason per direction, the best rigorous brackets of
    ε(claimed δ) and δ(claimed ε) per direction (empty where the claim is not an (ε, δ) claim or no
    method ran), the methods the time budget cut, and the full :class:`Outcome`; ``certificate`` is
    the JSON certificate ``verifier certify --json`` prints."""

    verdict: Verdict
    reasons: tuple[str, ...]
    claim: Claim
    epsilon: Mapping[Direction, Bracket]
    delta: Mapping[Direction, Bracket]
    cut: tuple[str, ...]
    outcome: Outcome

    @property
    def exit_status(self) -> int:
        """What ``verifier certify`` exits with: 0 CERTIFIED, 1 VIOLATED, 3 INCONCLUSIVE."""
        return self.verdict.exit_status

    @property
    def certificate(self) -> dict:
        from verifier.certify.certificate import to_certificate

        return to_certificate(self.outcome)

    def __str__(self) -> str:
        from verifier.cli._certify import summary_lines

        return "\n".join(summary_lines(self.outcome))


@dataclass(frozen=True)
class Profile:
    """Rigorous bounds on one quantity (ε at δ = ``at``, δ at ε = ``at``, or the attacker's TPR at
    FPR = ``at``): ``bracket`` over the requested directions (their maximum), ``brackets`` per
    direction, every bound with its method, side and direction, the methods run, those skipped
    (with the reason) and those the time budget cut."""

    quantity: Quantity
    at: float
    bracket: Bracket
    brackets: Mapping[Direction, Bracket]
    bounds: tuple[Bound, ...]
    ran: tuple[str, ...]
    skipped: tuple[str, ...]
    cut: tuple[str, ...]

    def __str__(self) -> str:
        name = {"epsilon": "ε(δ", "delta": "δ(ε", "tpr": "TPR(FPR"}[self.quantity.value]
        parts = "  ".join(f"{d.value} [{b.lower!r}, {b.upper!r}]" for d, b in self.brackets.items())
        return f"{name}={self.at!r}): [{self.bracket.lower!r}, {self.bracket.upper!r}]  ({parts}; methods run: {', '.join(self.ran)})"


#: Keywords that are not the command's flags: they state the question, not the model.
_QUESTION = ("epsilon", "delta", "rho", "fpr", "tpr", "neighboring", "num_self_compositions", "data_loader")


def claim_of(x: Any = None, /, **fields: Any) -> Claim:
    """The validated claim about ``x`` (any of the module docstring) with the claim fields
    ``epsilon``, ``delta`` (or ``rho``, or ``fpr`` and ``tpr``) and ``neighboring``; without ``x``
    the other keywords are the command's flags (``sigma=1.0, scheme="poisson", rate=0.01, …``).
    Raises :class:`InvalidArgument` naming the first offending field or keyword."""
    given = {key: fields.pop(key) for key in _QUESTION if key in fields}
    question = {key: value for key, value in given.items() if value is not None}
    if x is None:
        return _claim_from_flags(fields, question)
    if fields:
        key = sorted(fields)[0]
        raise InvalidArgument(key, fields[key], f"flags describe the model only when no object is given; {type(x).__name__} already describes it")
    if isinstance(x, Claim):
        if any(key in question for key in ("epsilon", "delta", "rho", "fpr", "tpr", "neighboring")):
            return _parse({**x.to_dict(), **question})
        return x
    if isinstance(x, (str, os.PathLike)):  # a claim file, as `verifier certify FILE` reads it
        from verifier.certify.claim import read_json

        x = read_json("claim", x)
    if isinstance(x, Mapping):
        return _parse({**x, **question})
    return _parse(_adapted(x, question))


def _parse(obj: Mapping[str, Any]) -> Claim:
    from verifier.certify.claim import parse_claim

    return parse_claim({k: v for k, v in obj.items() if k not in ("num_self_compositions", "data_loader")})


def _adapted(x: Any, question: dict) -> dict:
    """The claim object of a peer's object (module docstring), with the question's fields."""
    module = type(x).__module__.split(".")[0]
    if module == "dp_accounting" and hasattr(x, "ledger") and not type(x).__name__.endswith("DpEvent"):
        x = x.ledger  # a PrivacyAccountant: what it composed
    if module == "dp_accounting" or (isinstance(x, Mapping) and "class_name" in x):
        from verifier.adapters.dp_event import claim_object_from_dp_event

        claim = claim_object_from_dp_event(x, epsilon=0.0, delta=0.0, neighboring=question.get("neighboring", "add_or_remove"))
        return {**_model_fields(claim), **question}
    if module == "opacus" or hasattr(x, "history"):
        from verifier.adapters.opacus import from_opacus

        if "delta" not in question:
            raise InvalidArgument("delta", None, "is required for an Opacus accountant (its ε is read at this δ unless epsilon is given)")
        return {**from_opacus(x, delta=question["delta"], epsilon=question.get("epsilon"), data_loader=question.get("data_loader")).to_dict(), **question}
    if module == "prv_accountant" or (isinstance(x, Sequence) and x and type(x[0]).__module__.startswith("prv_accountant")):
        from verifier.adapters.prv import from_prv

        prvs = list(x) if isinstance(x, Sequence) else [x]
        counts = question.get("num_self_compositions", [1] * len(prvs))
        counts = [counts] if isinstance(counts, int) else list(counts)
        return {**_model_fields(from_prv(prvs, counts, epsilon=0.0, delta=0.0).to_dict()), **question}
    raise InvalidArgument(
        "x",
        type(x).__name__,
        "must be a Claim, a claim dict, a dp_accounting DpEvent or accountant, an Opacus accountant or prv_accountant PRVs",
        fix="or give the model as keywords, e.g. verifier.certify(sigma=1.0, scheme='poisson', rate=0.01, steps=1000, epsilon=2.0, delta=1e-5)",
    )


def _model_fields(obj: dict) -> dict:
    """A claim object without its claimed values (an adapter's placeholders): only the question's
    keywords state them, so a missing ``epsilon`` is refused, never read as 0."""
    return {key: value for key, value in obj.items() if key not in ("epsilon", "delta")}


def _claim_from_flags(flags: dict, question: dict) -> Claim:
    """The claim ``verifier certify`` builds from the same flags (names with ``_`` for ``-``; the
    peers' names as aliases; lists for the comma-separated flags)."""
    from verifier.certify.claim import PEER_NAMES
    from verifier.cli import build_parser
    from verifier.cli._certify import claim_from_flags

    args = build_parser("certify").parse_args(["certify"])
    for key, value in flags.items():
        name = PEER_NAMES.get(key, key)
        if name in flags and name != key:
            raise InvalidArgument(key, value, f"gives {name} a second time ({key} is the peers' name for {name})")
        if name in _QUESTION or name in ("claim", "example", "dp_event", "method", "time_budget", "json", "report", "output") or not hasattr(args, name):
            raise InvalidArgument(key, value, "is not a flag of verifier certify (see `verifier certify --help`; write - as _)")
        setattr(args, name, ",".join(map(repr, value)) if isinstance(value, (list, tuple)) else value)
    for key, value in question.items():
        setattr(args, {"rho": "claim_rho", "tpr": "claim_tpr"}.get(key, key), value)
    return claim_from_flags(args)


def certify(
    x: Any = None,
    /,
    *,
    epsilon: float | None = None,
    delta: float | None = None,
    rho: float | None = None,
    fpr: float | None = None,
    tpr: float | None = None,
    neighboring: str | None = None,
    methods: Sequence[str] | None = None,
    time_budget: float | None = None,
    **flags: Any,
) -> Certification:
    """Decide the claim "``x`` is (``epsilon``, ``delta``)-DP" (or ρ-zCDP, or TPR <= ``tpr`` at FPR
    ``fpr``) as ``verifier certify`` does (:func:`verifier.certify.verdict.certify`): CERTIFIED when
    a rigorous upper bound meets the claim in every direction, VIOLATED when a rigorous lower bound
    exceeds it, else INCONCLUSIVE.

    >>> import verifier
    >>> claim = {"mechanism": {"name": "gaussian", "sigma": 1.0}, "scheme": {"name": "poisson", "rate": 0.01, "steps": 1000}}
    >>> verifier.certify(claim, epsilon=2.0, delta=1e-5).verdict.value
    'CERTIFIED'
    """
    from verifier.certify.portfolio import cut_by_budget
    from verifier.certify.verdict import certify as decide_claim

    claim = claim_of(x, epsilon=epsilon, delta=delta, rho=rho, fpr=fpr, tpr=tpr, neighboring=neighboring, **flags)
    outcome = decide_claim(claim, only=_names(methods), time_budget=_budget(time_budget))
    collected = [c for c in (outcome.delta, outcome.epsilon, outcome.rho, outcome.tpr) if c is not None]
    cut = tuple(sorted(set().union(*(cut_by_budget(c.skipped) for c in collected)))) if collected else ()
    return Certification(
        verdict=outcome.verdict,
        reasons=outcome.decision.reasons,
        claim=claim,
        epsilon=dict(outcome.epsilon.brackets) if outcome.epsilon is not None else {},
        delta=dict(outcome.delta.brackets) if outcome.delta is not None else {},
        cut=cut,
        outcome=outcome,
    )


def epsilon(
    x: Any = None,
    /,
    *,
    delta: float,
    neighboring: str | None = None,
    methods: Sequence[str] | None = None,
    time_budget: float | None = None,
    **flags: Any,
) -> Profile:
    """Rigorous bracket of ε(``delta``), as ``verifier epsilon`` computes it (every applicable
    method, cheapest first; ε(δ) = inf{ε : δ(ε) <= δ}, Steinke 2022, Prop 7).

    >>> import verifier
    >>> result = verifier.epsilon(sigma=1.0, scheme="poisson", rate=0.01, steps=1000, delta=1e-5)
    >>> 1.82 < result.bracket.lower <= result.bracket.upper < 1.83
    True
    """
    from verifier._validation import check_half_open_unit

    return _profile(x, Quantity.EPSILON, check_half_open_unit("delta", delta), neighboring, methods, time_budget, flags)


def delta(
    x: Any = None,
    /,
    *,
    epsilon: float,
    neighboring: str | None = None,
    methods: Sequence[str] | None = None,
    time_budget: float | None = None,
    **flags: Any,
) -> Profile:
    """Rigorous bracket of δ(``epsilon``) (the hockey-stick divergence of the dominating pair, Zhu,
    Dong & Wang 2022, Def 4 / Thm 10), as ``verifier delta`` computes it.

    >>> import verifier
    >>> result = verifier.delta(sigma=1.0, epsilon=1.0)
    >>> round(result.bracket.upper, 6)
    0.126937
    """
    from verifier._validation import check_real

    return _profile(x, Quantity.DELTA, check_real("epsilon", epsilon), neighboring, methods, time_budget, flags)


def tradeoff(
    x: Any = None,
    /,
    *,
    fpr: float,
    neighboring: str | None = None,
    methods: Sequence[str] | None = None,
    time_budget: float | None = None,
    **flags: Any,
) -> Profile:
    """Rigorous bracket of a membership attacker's best TPR at false-positive rate ``fpr`` (1 − β(α)
    of the trade-off function, Dong, Roth & Su 2022, Def 2.1), as ``verifier tradeoff`` computes it
    (its brackets are clipped to [α, 1] there, which holds for every mechanism).

    >>> import verifier
    >>> result = verifier.tradeoff(sigma=1.0, fpr=0.05)
    >>> 0.25 < result.bracket.lower <= result.bracket.upper < 0.27
    True
    """
    from verifier._validation import check_unit

    return _profile(x, Quantity.TPR, check_unit("fpr", fpr), neighboring, methods, time_budget, flags)


def _profile(x: Any, quantity: Quantity, at: float, neighboring: str | None, methods: Sequence[str] | None, budget: float | None, flags: dict) -> Profile:
    from verifier.certify.portfolio import collect_bounds, cut_by_budget

    claim = claim_of(x, epsilon=1.0, delta=0.5, neighboring=neighboring, **flags)  # the model only: the claim's (ε, δ) are unused
    collected: Collected = collect_bounds(claim.model, quantity, at, claim.directions, only=_names(methods), time_budget=_budget(budget))
    return Profile(
        quantity=quantity,
        at=at,
        bracket=collected.combined,
        brackets=dict(collected.brackets),
        bounds=collected.bounds,
        ran=collected.ran,
        skipped=collected.skipped,
        cut=tuple(sorted(cut_by_budget(collected.skipped))),
    )


def _names(methods: Sequence[str] | None) -> list[str] | None:
    if methods is None:
        return None
    if isinstance(methods, str):
        return [methods]
    return list(methods)


def _budget(seconds: float | None) -> float | None:
    from verifier._validation import check_nonnegative

    return None if seconds is None else check_nonnegative("time_budget", seconds)
