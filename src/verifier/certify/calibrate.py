"""Certified calibration: the value of one free parameter (σ, rate, steps or epochs) at which a
claim's (ε, δ) target is met, with a certificate, and a proven bracket on the best possible value.

Privacy is monotone in each parameter: a larger σ is post-processing of a smaller one (add
independent Gaussian noise), a smaller sampling rate or fewer steps/epochs is post-processing of a
larger one (drop releases), so δ(ε) is non-increasing in σ and non-decreasing in rate, steps and
epochs (Steinke 2022, Prop 5, post-processing; Dong, Roth & Su 2022, Prop 2.8 for composition).
Hence the smallest safe σ, σ* = inf{σ : δ_σ(ε) <= δ}, satisfies

- σ* <= σ_safe for every σ_safe at which a rigorous *upper* bound on δ(ε) is <= δ (CERTIFIED);
- σ* >= σ_unsafe for every σ_unsafe at which a rigorous *lower* bound on δ(ε) is > δ (VIOLATED).

:func:`calibrate` probes the parameter with :func:`~verifier.certify.verdict.certify` (which runs
the cheap methods first and the tight ones only when the cheap ones do not decide) and bisects two
intervals on a log scale: one whose safe end is the smallest CERTIFIED value found and whose other
end is the closest value found not certified, and one whose unsafe end is the largest VIOLATED
value found and whose other end is the closest value found not violated. An INCONCLUSIVE probe
(the bounds straddle the target) splits the two apart. The answer is the safe end, with the
certificate of a final :func:`certify` run there (all methods, Monte Carlo evidence included); the
gap |safe − unsafe| / safe says how far it can be from the best possible value. For an integer
parameter the gap is the number of values between the ends.
"""

from __future__ import annotations

import copy
import math
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from verifier._types import Quantity
from verifier._validation import check_nonnegative
from verifier.certify.claim import MECHANISMS, SCHEMES, json_value, parse_claim
from verifier.certify.method import Guarantee
from verifier.certify.portfolio import best_bounds, select_methods
from verifier.certify.verdict import Outcome, Verdict, certify
from verifier.errors import InvalidArgument, NotCertified

__all__ = ["Knob", "KNOBS", "Probe", "Calibration", "calibrate", "DEFAULT_TOLERANCE"]

#: Default relative width of the bracket on the best value (0.5%, issue 18).
DEFAULT_TOLERANCE = 0.005

#: At most this many doublings/halvings when looking for a certified or a violated value.
_MAX_EXPANSIONS = 40


@dataclass(frozen=True)
class Knob:
    """A parameter calibration can move: where it lives in the claim JSON, whether a larger value
    is safer (σ) or riskier (rate, steps, epochs), its type, its range and where the search starts."""

    name: str
    where: str  # "mechanism" or "scheme"
    larger_is_safer: bool
    integer: bool
    minimum: float  # exclusive for reals, inclusive for integers
    maximum: float  # inclusive
    start: float


#: The calibratable parameters.
KNOBS: dict[str, Knob] = {
    "sigma": Knob("sigma", "mechanism", True, False, 0.0, 1e6, 1.0),
    "rate": Knob("rate", "scheme", False, False, 0.0, 1.0, 0.01),
    "steps": Knob("steps", "scheme", False, True, 1, 10**9, 100),
    "epochs": Knob("epochs", "scheme", False, True, 1, 10**6, 1),
    "times": Knob("times", "scheme", False, True, 1, 10**9, 10),
}


@dataclass(frozen=True)
class Probe:
    """One value tried during the search and the verdict the certifier gave it."""

    value: float
    verdict: Verdict
    seconds: float


@dataclass(frozen=True)
class Calibration:
    """The result: ``safe`` is the value whose certificate (``outcome``) is CERTIFIED; the best
    possible value lies between ``unsafe`` (proven VIOLATED; None when no method gave a lower bound
    that refutes any value tried) and ``safe``."""

    parameter: str
    safe: float
    unsafe: float | None
    outcome: Outcome
    probes: tuple[Probe, ...]
    seconds: float
    budget_spent: bool = False  # the time budget stopped the search: the bracket is what was proven by then

    @property
    def gap(self) -> float:
        """|safe − unsafe| / safe (+∞ when no value was proven unsafe)."""
        if self.unsafe is None:
            return math.inf
        return abs(self.safe - self.unsafe) / abs(self.safe)

    def to_dict(self) -> dict:
        return {
            "parameter": self.parameter,
            "safe": self.safe,
            "unsafe": self.unsafe,
            "gap": None if self.unsafe is None else self.gap,
            "probes": [{"value": p.value, "verdict": p.verdict.value, "seconds": p.seconds} for p in self.probes],
            "seconds": self.seconds,
            "time_budget_spent": self.budget_spent,
        }


class _Search:
    """The search state on the safety axis s (larger s = safer): s = log σ, −log rate, −steps.

    ``decide(value, methods)`` returns a probe's verdict, the methods whose bounds decided it, and,
    when the certifier bounded ε at the claimed δ, the log of that bracket's ends relative to the
    claimed ε (None otherwise), which sizes the steps away from the start (:meth:`_step`). Between
    a certified and a violated end, a probe runs only the methods that decided those ends (a method
    that could not certify the safer end cannot certify a riskier value, nor refute a safer one
    than it refuted), and all of them again if that leaves it INCONCLUSIVE. Only the probe values
    and their cost depend on this; every end of the answer is a probe's own verdict. (Secant steps
    on the ε brackets were tried and dropped: the certifier refines each probe only until it
    decides, so the brackets are too loose to place the crossing better than halving does.)"""

    def __init__(
        self,
        knob: Knob,
        decide: Callable[[float, Sequence[str] | None], tuple[Verdict, frozenset[str], tuple[float, float] | None]],
        progress: Callable[[Probe], None] | None,
        spent: Callable[[], bool] = lambda: False,
    ) -> None:
        self.knob, self._decide, self._progress, self.spent = knob, decide, progress, spent
        self.probes: list[Probe] = []
        self._log_ratios: dict[float, tuple[float, float]] = {}  # s -> (log ε_lo/ε, log ε_hi/ε)
        self._deciders: dict[float, frozenset[str]] = {}  # s -> methods whose bounds decided the probe
        self.safe: float | None = None  # smallest s CERTIFIED
        self.unsafe: float | None = None  # largest s VIOLATED
        self.not_certified: float | None = None  # largest s below `safe` not certified
        self.not_violated: float | None = None  # smallest s above `unsafe` not violated

    def to_s(self, value: float) -> float:
        if self.knob.integer:
            return value if self.knob.larger_is_safer else -value
        return math.log(value) if self.knob.larger_is_safer else -math.log(value)

    def to_value(self, s: float) -> float:
        if self.knob.integer:
            return int(s if self.knob.larger_is_safer else -s)
        return math.exp(s) if self.knob.larger_is_safer else math.exp(-s)

    def _methods_between(self, s: float) -> list[str] | None:
        """The methods that decided the current safe and unsafe ends when s lies between them
        (None: run them all)."""
        if self.safe is None or self.unsafe is None or not self.unsafe < s < self.safe:
            return None
        methods = self._deciders.get(self.safe, frozenset()) | self._deciders.get(self.unsafe, frozenset())
        return sorted(methods) or None

    def probe(self, value: float) -> Verdict:
        start = time.perf_counter()
        s = self.to_s(value)
        methods = self._methods_between(s)
        verdict, deciders, ratios = self._decide(value, methods)
        if verdict is Verdict.INCONCLUSIVE and methods is not None:
            verdict, deciders, ratios = self._decide(value, None)
        self.probes.append(Probe(value, verdict, time.perf_counter() - start))
        if self._progress is not None:
            self._progress(self.probes[-1])
        self._deciders[s] = deciders
        if ratios is not None:
            self._log_ratios[s] = ratios
        if verdict is Verdict.CERTIFIED:
            self.safe = s if self.safe is None else min(self.safe, s)
        else:
            self.not_certified = s if self.not_certified is None else max(self.not_certified, s)
        if verdict is Verdict.VIOLATED:
            self.unsafe = s if self.unsafe is None else max(self.unsafe, s)
        else:
            self.not_violated = s if self.not_violated is None else min(self.not_violated, s)
        return verdict

    def _clamp(self, value: float) -> float:
        knob = self.knob
        value = min(value, knob.maximum)
        if knob.integer:
            return max(int(value), int(knob.minimum))
        return value

    def expand(self, start: float) -> None:
        """Probe ``start``, then double/halve (:meth:`_step`) until a CERTIFIED and (if any method
        can refute) a VIOLATED value are known, or the parameter's range ends."""
        self.probe(self._clamp(start))
        for _ in range(_MAX_EXPANSIONS):
            if self.spent():
                return
            if self.safe is None:
                value = self._step(self.not_certified, safer=True)
            elif self.unsafe is None:
                value = self._step(self.safe if self.not_certified is None else self.not_certified, safer=False)
            else:
                return
            if value is None:
                return
            self.probe(value)

    def _step(self, s: float, *, safer: bool) -> float | None:
        """The value one doubling (or halving) from s towards the safe (or unsafe) side; None at
        the end of the range. A real parameter moves less where the probe at s bounded ε close to
        the target: by 1.1·|log(ε end / claimed ε)| on the log axis (the upper end when moving
        safer, the lower end when moving riskier), enough if ε varies at least like 1/σ or the
        rate (the Gaussian mechanism: ε ∝ 1/σ at large σ); a step that falls short is followed by
        another."""
        knob = self.knob
        value = self.to_value(s)
        factor = 2.0 if safer == knob.larger_is_safer else 0.5
        ratio = self._log_ratios.get(s, (math.nan, math.nan))[1 if safer else 0]
        if not knob.integer and math.isfinite(ratio) and 0.0 < abs(ratio) < math.log(2.0) / 1.1:
            factor = math.exp(1.1 * abs(ratio)) if factor > 1.0 else math.exp(-1.1 * abs(ratio))
        moved = self._clamp(value * factor)
        if knob.integer and moved == value:
            moved = self._clamp(value + (1 if factor > 1 else -1))
        if moved == value or (not knob.integer and moved <= knob.minimum):
            return None
        return moved

    def _interval(self, tolerance: float) -> tuple[float, float] | None:
        """The wider unconverged interval of the two (certified search, violated search)."""
        candidates = []
        if self.safe is not None and self.not_certified is not None:
            candidates.append((self.not_certified, self.safe))
        if self.unsafe is not None and self.not_violated is not None:
            candidates.append((self.unsafe, self.not_violated))
        if self.knob.integer:
            width_needed = 1.0
        else:  # on the log axis; log1p(tol) keeps both |σ−σ'|/σ and |λ−λ'|/λ below tol
            width_needed = math.log1p(tolerance)
            if self.unsafe is not None and self.safe is not None and self.safe - self.unsafe <= width_needed:
                return None
            width_needed /= 2.0
        open_ = [(a, b) for a, b in candidates if b - a > width_needed]
        return max(open_, key=lambda ab: ab[1] - ab[0], default=None)

    def bisect(self, tolerance: float, max_probes: int) -> None:
        while len(self.probes) < max_probes and not self.spent():
            interval = self._interval(tolerance)
            if interval is None:
                return
            a, b = interval
            middle = (a + b) / 2.0
            if self.knob.integer:
                middle = math.floor(middle)
            self.probe(self.to_value(middle))


def _claim_from_text(text: str) -> dict:
    """A claim given as JSON text; :class:`InvalidArgument` when it is not a JSON object."""
    claim = json_value("claim", text)
    if not isinstance(claim, dict):
        raise InvalidArgument("claim", text[:60], "must be a JSON object with the fields mechanism, scheme, epsilon, delta")
    return claim


def _deciders(outcome: Outcome) -> frozenset[str]:
    """The methods whose rigorous bounds on δ decided a CERTIFIED or VIOLATED outcome (the rule of
    :func:`~verifier.certify.verdict.decide`); empty for INCONCLUSIVE or without δ bounds."""
    if outcome.delta is None or outcome.verdict is Verdict.INCONCLUSIVE:
        return frozenset()
    claimed = outcome.claim.delta
    usable = [b for b in outcome.delta.bounds if b.rigorous and b.quantity is Quantity.DELTA]
    names = set()
    for direction in outcome.claim.directions:
        lower, upper = best_bounds(usable, direction)
        if outcome.verdict is Verdict.VIOLATED and lower is not None and lower.value > claimed:
            names.add(lower.method)
        elif outcome.verdict is Verdict.CERTIFIED and upper is not None and upper.value <= claimed:
            names.add(upper.method)
    return frozenset(name.split(":")[0] for name in names)  # "exact:gaussian" is the exact method's


def _log_ratios(outcome: Outcome, epsilon: float | None) -> tuple[float, float] | None:
    """(log ε_lo/ε, log ε_hi/ε) of the probe's bracket on ε at the claimed δ (max over the claim's
    directions), −∞/+∞ for an end at 0/∞; None without such a bracket."""
    if outcome.epsilon is None or not epsilon or epsilon <= 0.0 or not outcome.epsilon.brackets:
        return None
    got = outcome.epsilon.combined

    def log_ratio(x: float) -> float:
        return -math.inf if x <= 0.0 else math.log(x / epsilon)

    return log_ratio(float(got.lower)), log_ratio(float(got.upper))


def _with_value(claim: Mapping[str, Any], knob: Knob, value: float) -> dict:
    out = copy.deepcopy(dict(claim))
    part = dict(out.get(knob.where) or {})
    part[knob.name] = value
    out[knob.where] = part
    return out


def calibrate(
    claim: Mapping[str, Any] | str,
    parameter: str = "sigma",
    *,
    tolerance: float = DEFAULT_TOLERANCE,
    max_probes: int = 60,
    only: Sequence[str] | None = None,
    progress: Callable[[Probe], None] | None = None,
    time_budget: float | None = None,
) -> Calibration:
    """The value of ``parameter`` (``sigma``, ``rate``, ``steps``, ``epochs`` or ``times``) that meets the
    claim's (ε, δ) with a certificate, and a proven bracket on the best possible value (module
    docstring). ``claim`` is a claim as JSON, parsed (a dict) or as text (the README's
    ``verifier.calibrate(claim_json, "sigma")``; see :func:`~verifier.certify.claim.parse_claim`); the
    parameter's value in it, if any, is where the search starts (the answer is certified either way;
    its digits depend on the start, within ``tolerance``). Stops when the bracket is narrower
    than ``tolerance`` (relative; for an integer parameter, adjacent values) or after
    ``max_probes`` certifier runs; the returned bracket is what was proven, whatever its width.
    ``only`` restricts the methods (as in :func:`certify`); ``progress`` is called after each probe.
    With ``time_budget`` (seconds) every probe gets what is left of it (as ``certify --time-budget``),
    no probe starts once it is spent, and the answer is the bracket proven by then
    (``budget_spent``), its certificate that of the safe end's own probe.

    Raises :class:`InvalidArgument` for an unknown parameter, a parameter the scheme does not have,
    or a zCDP claim; :class:`NotCertified` when no value in the parameter's range is certified.
    """
    if parameter not in KNOBS:
        raise InvalidArgument("parameter", parameter, f"must be one of {', '.join(KNOBS)}")
    if not (isinstance(tolerance, (int, float)) and 0.0 < tolerance < 1.0):
        raise InvalidArgument("tolerance", tolerance, "must lie in (0, 1)")
    if isinstance(claim, str):
        claim = _claim_from_text(claim)
    knob = KNOBS[parameter]
    started = time.perf_counter()
    part = claim.get(knob.where) if isinstance(claim.get(knob.where), Mapping) else {}
    spec = (MECHANISMS if knob.where == "mechanism" else SCHEMES).get(part.get("name"))
    if spec is not None and parameter not in spec.fields:
        raise InvalidArgument("parameter", parameter, f"is not a field of {knob.where} {part['name']!r} (it has: {', '.join(spec.fields) or 'none'})")
    start = part.get(parameter, knob.start)
    first = parse_claim(_with_value(claim, knob, start))  # validates everything else, names bad fields
    if first.rho is not None:
        raise InvalidArgument("rho", first.rho, "calibration targets an (ε, δ) claim", fix="give epsilon and delta")
    if first.tpr is not None:
        raise InvalidArgument("tpr", first.tpr, "calibration targets an (ε, δ) claim", fix="give epsilon and delta")
    bounding = [m.name for m in select_methods(first.model, only) if m.returns != frozenset({Guarantee.ESTIMATE})]
    budget = None if time_budget is None else check_nonnegative("time_budget", time_budget)
    certified: dict[float, tuple[float, Outcome]] = {}  # each CERTIFIED probe's (value, outcome), by its place s on the search axis

    def left() -> float | None:
        return None if budget is None else max(0.0, budget - (time.perf_counter() - started))

    def decide(value: float, methods: Sequence[str] | None) -> tuple[Verdict, frozenset[str], tuple[float, float] | None]:
        chosen = [m for m in bounding if m in methods] if methods else bounding
        outcome = certify(parse_claim(_with_value(claim, knob, value)), only=chosen or bounding or None, time_budget=left())
        if outcome.verdict is Verdict.CERTIFIED:
            certified[search.to_s(value)] = (value, outcome)
        return outcome.verdict, _deciders(outcome), _log_ratios(outcome, first.epsilon)

    search = _Search(knob, decide, progress, spent=lambda: left() == 0.0)
    search.expand(start)
    if search.safe is None:
        why = f"the time budget of {budget:g} s was spent first" if left() == 0.0 else "no value of it in its range was certified"
        raise NotCertified(
            f"{parameter}: {why} for (ε={first.epsilon!r}, δ={first.delta!r}); "
            f"tried {', '.join(f'{p.value:g}: {p.verdict.value}' for p in search.probes)}"
        )
    search.bisect(tolerance, max_probes)
    safe = search.to_value(search.safe)
    unsafe = None if search.unsafe is None else search.to_value(search.unsafe)
    outcome = None if left() == 0.0 else certify(parse_claim(_with_value(claim, knob, safe)), only=only, time_budget=left())
    if outcome is None or (outcome.verdict is not Verdict.CERTIFIED and left() == 0.0):  # the budget cut it: the probe's own certificate
        safe, outcome = certified[search.safe]
    if outcome.verdict is not Verdict.CERTIFIED:  # the final run adds methods; it cannot lose a bound
        raise NotCertified(f"{parameter}={safe!r} was certified while searching but not in the final run: {outcome.decision.reasons}")
    return Calibration(parameter, safe, unsafe, outcome, tuple(search.probes), time.perf_counter() - started, budget_spent=left() == 0.0)
