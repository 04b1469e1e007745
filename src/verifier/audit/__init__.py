"""``verifier audit PEER``: run an installed accountant on a grid of claims (and, optionally, the
property catalogue with Hypothesis) and hold every number against verifier's rigorous bracket.

Each row is one number the peer produced: the peer's accountant and neighbouring relation, the claim
(mechanism, scheme, δ), the peer's ε, verifier's rigorous bracket [lower, upper] on the true ε(δ),
and the status:

- ``UNSOUND``: the peer's ε is below verifier's rigorous lower bound, so its claim is false; the row
  carries the ``verifier certify`` command that reproduces it and the verdict certify gave;
- ``sound``: at or above the lower bound; ``excess`` is how far above verifier's upper bound it is
  (relative; negative inside the bracket), reported, never failed.

A peer that is not installed is reported as skipped. Peers live in :data:`PEERS` (module names).
"""

from __future__ import annotations

import importlib
import math
from dataclasses import dataclass, field
from verifier._types import Bracket
from verifier.certify.claim import Claim, parse_claim
from verifier.certify.verdict import certify
from verifier.errors import InvalidArgument, VerifierError
from verifier.properties.accountant import Accountant, certify_command, claim_epsilon
from verifier.properties.catalogue import CATALOGUE, SOUNDNESS_RTOL, PropertyFailure

__all__ = ["AuditRow", "AuditReport", "PEERS", "audit", "judge", "judge_tpr", "catalogue_rows", "PeerMissing", "describe", "require"]

#: Peer name -> module implementing ``rows(examples: int, quick: bool) -> list[AuditRow]``.
PEERS = {
    "dp_accounting": "verifier.audit.dp_accounting",
    "opacus": "verifier.audit.opacus",
    "autodp": "verifier.audit.autodp",
    "prv_accountant": "verifier.audit.prv_accountant",
    "random_allocation": "verifier.audit.random_allocation",
    "pld_accounting": "verifier.audit.pld_accounting",
    "jax_privacy": "verifier.audit.jax_privacy",
}


class PeerMissing(VerifierError):
    """The peer library is not installed (the audit reports it as skipped)."""


@dataclass(frozen=True)
class AuditRow:
    """One number a peer produced, judged against verifier's rigorous bracket."""

    accountant: str
    relation: str
    case: str
    peer_epsilon: float
    bracket: Bracket | None
    status: str
    check: str = "soundness"  # the catalogue property the row tests
    reproducer: str = ""
    verdict: str = ""
    note: str = ""
    quantity: str = "epsilon"  # "tpr" or "delta": ``peer_epsilon`` holds the peer's TPR at the FPR, or δ at the ε, the case names
    group: str = ""  # what the row belongs to in the per-class table (a peer's event class), if any

    @property
    def excess(self) -> float | None:
        """(peer ε − verifier's upper bound) / upper bound; None without a finite bracket."""
        if self.bracket is None or not math.isfinite(self.bracket.upper) or self.bracket.upper == 0:
            return None
        return (self.peer_epsilon - self.bracket.upper) / abs(self.bracket.upper)

    def to_dict(self) -> dict:
        out = {
            "accountant": self.accountant,
            "relation": self.relation,
            "case": self.case,
            "property": self.check,
            "peer_epsilon": _number(self.peer_epsilon),
            "status": self.status,
        }
        if self.quantity != "epsilon":
            out["quantity"] = self.quantity
            out[f"peer_{self.quantity}"] = out.pop("peer_epsilon")
        if self.bracket is not None:
            out["verifier_bracket"] = [_number(self.bracket.lower), _number(self.bracket.upper)]
            out["excess"] = _number(self.excess) if self.excess is not None else None
        for key in ("reproducer", "verdict", "note", "group"):
            if getattr(self, key):
                out[key] = getattr(self, key)
        return out


def _number(x: float) -> float | str:
    return x if math.isfinite(x) else str(x)


@dataclass(frozen=True)
class AuditReport:
    """Every row of one peer's audit, or the reason it was skipped."""

    peer: str
    rows: tuple[AuditRow, ...] = ()
    skipped: str = ""
    notes: tuple[str, ...] = field(default=())
    unjudged: tuple[tuple[str, str], ...] = ()  # (group, why no number was judged) for the per-class table

    @property
    def findings(self) -> tuple[AuditRow, ...]:
        return tuple(r for r in self.rows if r.status == "UNSOUND")

    def to_dict(self) -> dict:
        out: dict = {"peer": self.peer, "findings": len(self.findings), "rows": [r.to_dict() for r in self.rows]}
        if self.skipped:
            out["skipped"] = self.skipped
        if self.notes:
            out["notes"] = list(self.notes)
        if self.unjudged:
            out["unjudged"] = {group: why for group, why in self.unjudged}
        return out


def judge(
    accountant: str, claim_object: dict, peer_epsilon: float, *, note: str = "", verify: bool = True, side: str = "upper", group: str = ""
) -> AuditRow:
    """The row for a peer that claimed ``peer_epsilon`` for the claim ``claim_object`` (its
    ``epsilon`` is replaced by the peer's). An UNSOUND row is re-decided by ``certify`` (``verify``).
    With ``side="lower"`` the peer's number is a claimed LOWER bound on ε: it is unsound above
    verifier's rigorous upper bound (no certify reproducer: a claim states an upper bound)."""
    # A claim needs a finite ε; an upper bound of +∞ is (vacuously) sound and is judged on the bracket alone.
    claim = parse_claim({**claim_object, "epsilon": float(peer_epsilon) if math.isfinite(peer_epsilon) else 1.0})
    bracket = claim_epsilon(claim)
    case = describe(claim)
    if side == "lower":
        ok = peer_epsilon <= bracket.upper + SOUNDNESS_RTOL * max(abs(bracket.upper), 1e-12)
        return AuditRow(
            accountant, claim.neighboring, case, float(peer_epsilon), bracket, "sound" if ok else "UNSOUND", check="lower_soundness", note=note, group=group
        )
    scale = max(abs(bracket.lower), 1e-12)
    slack = SOUNDNESS_RTOL * scale if math.isfinite(scale) else 0.0  # ε = +∞ against a lower bound of +∞ is sound
    if not peer_epsilon >= bracket.lower - slack:
        verdict = certify(claim).verdict.value if verify and math.isfinite(peer_epsilon) else ""
        return AuditRow(
            accountant, claim.neighboring, case, float(peer_epsilon), bracket, "UNSOUND", reproducer=certify_command(claim), verdict=verdict, note=note, group=group
        )
    return AuditRow(accountant, claim.neighboring, case, float(peer_epsilon), bracket, "sound", note=note, group=group)


def judge_tpr(accountant: str, claim_object: dict, fpr: float, peer_tpr: float, *, note: str = "", verify: bool = True) -> AuditRow:
    """The row for a peer whose numbers imply that a membership attacker at FPR ``fpr`` has TPR at most
    ``peer_tpr`` (e.g. a μ-GDP statement: Φ(Φ⁻¹(α) + μ)), for the mechanism and scheme of
    ``claim_object`` (its ε, δ dropped): UNSOUND below verifier's rigorous lower bound on TPR (the
    maximum over the required directions; verifier.pld.tradeoff), re-decided by ``certify``."""
    from verifier._types import Quantity
    from verifier.certify.portfolio import collect_bounds

    base = {k: v for k, v in claim_object.items() if k not in ("epsilon", "delta", "rho", "fpr", "tpr")}
    claim = parse_claim({**base, "fpr": float(fpr), "tpr": min(1.0, max(0.0, float(peer_tpr)))})
    bracket = collect_bounds(claim.model, Quantity.TPR, claim.fpr, claim.directions).combined
    bracket = Bracket(float(bracket.lower), float(bracket.upper))
    case = describe(claim)
    if peer_tpr < bracket.lower - SOUNDNESS_RTOL * max(abs(bracket.lower), 1e-12):
        verdict = certify(claim).verdict.value if verify else ""
        return AuditRow(accountant, claim.neighboring, case, float(peer_tpr), bracket, "UNSOUND", check="tpr_soundness",
                        reproducer=certify_command(claim), verdict=verdict, note=note, quantity="tpr")
    return AuditRow(accountant, claim.neighboring, case, float(peer_tpr), bracket, "sound", check="tpr_soundness", note=note, quantity="tpr")


def describe(claim: Claim) -> str:
    """``gaussian(sigma=4) poisson(rate=0.01, steps=1000), δ=1e-05`` for a claim (``…, TPR at FPR=0.001``
    for a trade-off claim)."""

    def text(obj: dict) -> str:
        params = ", ".join(f"{k}={v:g}" if isinstance(v, (int, float)) else f"{k}={v}" for k, v in obj.items() if k not in ("name", "mechanism", "phases", "run"))
        return f"{obj['name']}({params})"

    def run(scheme: dict, mechanism: dict | None) -> str:
        mechanism = scheme.get("mechanism") or mechanism
        if scheme["name"] == "sequence":
            return " then ".join(run(p, None) for p in scheme["phases"])
        if "run" in scheme:
            return f"{text(scheme)} of [{run(scheme['run'], mechanism)}]"
        return f"{text(mechanism)} {text(scheme)}"

    body = run(claim.scheme, claim.mechanism)
    return f"{body}, TPR at FPR={claim.fpr:g}" if claim.tpr is not None else f"{body}, δ={claim.delta:g}"


def catalogue_rows(accountant: Accountant, examples: int) -> list[AuditRow]:
    """Run every applicable catalogue property with Hypothesis (``examples`` cases each); one row
    per property that fails, with the shrunk case."""
    from verifier.properties.runner import run_property

    rows = []
    for prop in CATALOGUE:
        if not prop.applies_to(accountant):
            continue
        try:
            run_property(prop, accountant, max_examples=examples)
        except PropertyFailure as failure:
            found = failure.finding
            eps = next((v for k, v in found.numbers.items() if "ε" in k), math.nan)
            rows.append(
                AuditRow(accountant.name, accountant.neighboring, str(found.case), float(eps), found.bracket, "UNSOUND" if prop.name == "soundness" else "VIOLATES",
                         check=prop.name, reproducer=found.reproducer, note=found.detail)
            )
    return rows


def audit(peer: str, *, examples: int = 0, quick: bool = False) -> AuditReport:
    """Audit ``peer`` (a key of :data:`PEERS`): its grid (``quick``: a few cells per accountant),
    plus ``examples`` Hypothesis examples per catalogue property where it exposes an ε function."""
    if peer not in PEERS:
        raise InvalidArgument("peer", peer, f"must be one of {', '.join(PEERS)}")
    if examples:
        try:
            import hypothesis  # noqa: F401
        except ImportError:
            raise InvalidArgument("examples", examples, "needs Hypothesis (pip install hypothesis), or run the grid only with --examples 0") from None
    module = importlib.import_module(PEERS[peer])
    try:
        found = module.rows(examples=examples, quick=quick)  # (rows, notes) or (rows, notes, unjudged)
    except PeerMissing as missing:
        return AuditReport(peer, skipped=str(missing))
    unjudged = tuple(found[2]) if len(found) > 2 else ()
    return AuditReport(peer, tuple(found[0]), notes=tuple(found[1]), unjudged=unjudged)


def require(module_name: str, install: str) -> None:
    """Import ``module_name`` or raise :class:`PeerMissing` saying how to install it."""
    try:
        importlib.import_module(module_name)
    except ImportError as exc:
        raise PeerMissing(f"{module_name} is not installed ({exc}); install it with: pip install {install}") from None
