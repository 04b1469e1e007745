"""The catalogue of properties every correct accountant satisfies, each with its source.

A property is checked on one :class:`~verifier.properties.accountant.Case` at a time (Hypothesis
draws the cases); a violation raises :class:`PropertyFailure`, whose message is the finding: the
case, the accountant's numbers, verifier's rigorous bracket where one is involved, and the
``verifier certify`` command that reproduces it.

Two kinds: an *inequality* any sound accountant satisfies (its ε is an upper bound on the true
ε(δ), and the true ε(δ) obeys the inequality), and an *identity* between two routes to the same
quantity, checked with a stated tolerance (an accountant's two routes may differ by its own slack).

Which broken implementation each property catches is stated in its ``catches`` field.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Callable

from verifier._types import Bracket
from verifier.pairs import Gaussian, Laplace
from verifier.properties.accountant import Accountant, Case, certify_command, claim_for, rigorous_delta, rigorous_epsilon, rigorous_renyi
from verifier.schemes import Allocation, Composed, Poisson, Scheme, Single

__all__ = ["Property", "Finding", "PropertyFailure", "CATALOGUE", "by_name", "SOUNDNESS_RTOL", "GRID_RTOL", "IDENTITY_RTOL", "DUALITY_ATOL"]

#: Relative shortfall below verifier's rigorous lower bound that is still passed: accountants compute
#: in float64 without directed rounding, so an exact accountant may land a few ulps below.
SOUNDNESS_RTOL = 1e-9
#: Relative slack for monotonicity across *different* schemes: an accountant that discretises the
#: privacy loss on a grid (dp_accounting's default interval 1e-4) wiggles by about one grid step
#: between neighbouring parameters without being wrong.
GRID_RTOL = 1e-3
#: Relative disagreement allowed between two routes to the same quantity (an identity).
IDENTITY_RTOL = 0.02
#: Absolute error allowed on δ(−ε) of one direction in the duality identity: δ(−ε) >= 1 − e^{−ε} is of
#: order one, so an accountant computing it in float64 loses ~1e-16 to 1e-12 absolutely, and the
#: identity multiplies that by e^ε.
DUALITY_ATOL = 1e-10


@dataclass(frozen=True)
class Finding:
    """A property violation: where, the accountant's numbers, verifier's bracket, a reproducer."""

    property: str
    case: Case
    numbers: dict
    detail: str
    bracket: Bracket | None = None
    reproducer: str = ""

    def to_dict(self) -> dict:
        out = {"property": self.property, "case": str(self.case), "numbers": dict(self.numbers), "detail": self.detail}
        if self.bracket is not None:
            out["verifier_bracket"] = [self.bracket.lower, self.bracket.upper]
        if self.reproducer:
            out["reproducer"] = self.reproducer
        return out

    def report(self) -> str:
        lines = [f"property {self.property!r} fails at {self.case}", f"  {self.detail}"]
        lines += [f"  {name} = {value!r}" for name, value in self.numbers.items()]
        if self.bracket is not None:
            lines.append(f"  verifier's rigorous bracket on ε(δ): [{self.bracket.lower!r}, {self.bracket.upper!r}]")
        if self.reproducer:
            lines.append(f"  reproduce: {self.reproducer}")
        return "\n".join(lines)


class PropertyFailure(AssertionError):
    """Raised by a property check; carries the :class:`Finding`."""

    def __init__(self, finding: Finding) -> None:
        super().__init__(finding.report())
        self.finding = finding


@dataclass(frozen=True)
class Property:
    """One named property: what it states, its source, its kind, the scheme classes it is drawn on
    (``kinds``), the classes the accountant must also accept (``needs``), and its check."""

    name: str
    statement: str
    source: str
    kind: str  # "inequality" or "identity"
    kinds: tuple[type, ...]
    catches: str
    check: Callable[[Accountant, Case], None]
    needs: tuple[type, ...] = ()
    uses: tuple[str, ...] = ("epsilon",)  # the accountant functions the check calls

    def applies_to(self, accountant: Accountant) -> bool:
        return (
            any(k in accountant.schemes for k in self.kinds)
            and all(k in accountant.schemes for k in self.needs)
            and all(getattr(accountant, f) is not None for f in self.uses)
        )


def _eps(accountant: Accountant, scheme: Scheme, delta: float) -> float:
    return float(accountant.epsilon(scheme, delta))


def _fail(prop: str, case: Case, numbers: dict, detail: str, **extra) -> None:
    raise PropertyFailure(Finding(prop, case, numbers, detail, **extra))


def _steer(shortfall: float) -> None:
    """Inside a Hypothesis run, steer generation toward a larger shortfall (``target``)."""
    try:
        from hypothesis import target
        from hypothesis.control import currently_in_test_context
    except ImportError:  # the audit's grid runs without Hypothesis
        return
    if currently_in_test_context():
        target(shortfall, label="shortfall below verifier's lower bound")


# --- soundness against verifier -------------------------------------------------------------------


def _check_soundness(accountant: Accountant, case: Case) -> None:
    """ε_acc(δ) >= verifier's rigorous lower bound on ε(δ) (up to :data:`SOUNDNESS_RTOL`)."""
    eps = _eps(accountant, case.scheme, case.delta)
    bracket = rigorous_epsilon(case.scheme, case.delta, accountant.neighboring)
    scale = max(abs(bracket.lower), 1e-12)
    _steer((bracket.lower - eps) / scale if math.isfinite(eps) else 0.0)
    if not eps >= bracket.lower - SOUNDNESS_RTOL * scale:
        claim = claim_for(case.scheme, accountant.neighboring, eps, case.delta, source=accountant.name) if math.isfinite(eps) else None
        _fail(
            "soundness",
            case,
            {f"{accountant.name} ε": eps, "shortfall": bracket.lower - eps},
            "the accountant's ε is below verifier's rigorous lower bound on the true ε(δ): its claim is false",
            bracket=bracket,
            reproducer=certify_command(claim) if claim else "",
        )


def _check_delta_soundness(accountant: Accountant, case: Case) -> None:
    """δ_acc(ε) >= verifier's rigorous lower bound on δ(ε)."""
    value = float(accountant.delta(case.scheme, case.epsilon))
    bracket = rigorous_delta(case.scheme, case.epsilon, accountant.neighboring)
    _steer((bracket.lower - value) / max(bracket.lower, 1e-300) if math.isfinite(value) else 0.0)
    if not value >= bracket.lower * (1 - SOUNDNESS_RTOL):
        raise PropertyFailure(
            Finding(
                "delta_soundness",
                case,
                {f"{accountant.name} δ(ε={case.epsilon!r})": value, "verifier's δ bracket": (bracket.lower, bracket.upper)},
                f"at {case.at_epsilon()} the accountant's δ is below verifier's rigorous lower bound on the true δ(ε)",
            )
        )


def _check_round_trip(accountant: Accountant, case: Case) -> None:
    """δ_acc(ε_acc(δ)) <= δ: ε(δ) is the least ε with δ(ε) <= δ (Steinke 2022, §3)."""
    eps = _eps(accountant, case.scheme, case.delta)
    back = float(accountant.delta(case.scheme, eps))
    if not back <= case.delta * (1 + 1e-6):
        _fail("round_trip", case, {"ε(δ)": eps, "δ(ε(δ))": back}, "δ at the accountant's own ε(δ) exceeds δ: the two functions disagree")


def _check_delta_monotone_in_epsilon(accountant: Accountant, case: Case) -> None:
    """δ(ε + 1/2) <= δ(ε): the hockey-stick divergence H_{e^ε} is non-increasing in ε."""
    low, high = float(accountant.delta(case.scheme, case.epsilon)), float(accountant.delta(case.scheme, case.epsilon + 0.5))
    if not high <= low * (1 + 1e-9) + 1e-300:
        _fail("delta_nonincreasing_in_epsilon", case, {f"δ(ε={case.epsilon!r})": low, f"δ(ε={case.epsilon + 0.5!r})": high}, "a larger ε got a larger δ")


def _check_delta_convex(accountant: Accountant, case: Case) -> None:
    """δ is convex in γ = e^ε: H_γ(P‖Q) = E_Q[(P/Q − γ)_+] is a mean of convex functions of γ
    (Steinke 2022, Def 4); checked at the midpoint of γ and γe."""
    g0 = math.exp(case.epsilon)
    g1 = g0 * math.e
    mid = math.log((g0 + g1) / 2)
    d0, d1, dm = (float(accountant.delta(case.scheme, e)) for e in (case.epsilon, case.epsilon + 1.0, mid))
    if not dm <= (d0 + d1) / 2 * (1 + 1e-9) + 1e-300:
        _fail(
            "delta_convex_in_exp_epsilon",
            case,
            {f"δ(ε={case.epsilon!r})": d0, f"δ(ε={mid!r})": dm, f"δ(ε={case.epsilon + 1.0!r})": d1},
            "δ at the midpoint of e^ε lies above the chord: not convex in e^ε",
        )


def _check_rdp_soundness(accountant: Accountant, case: Case) -> None:
    """RDP_acc(α) >= verifier's rigorous lower bound on D_α (single and composed steps)."""
    value = float(accountant.rdp(case.scheme, case.order))
    bracket = rigorous_renyi(case.scheme, case.order, accountant.neighboring)
    if not value >= bracket.lower * (1 - SOUNDNESS_RTOL):
        raise PropertyFailure(
            Finding("rdp_soundness", case, {f"{accountant.name} D_α(α={case.order!r})": value}, f"at {case.at_order()} the accountant's RDP is below the rigorous lower bound on D_α", bracket=bracket)
        )


def _check_rdp_monotone(accountant: Accountant, case: Case) -> None:
    """D_α is non-decreasing in α (van Erven & Harremoës 2014, Thm 3)."""
    low, high = float(accountant.rdp(case.scheme, case.order)), float(accountant.rdp(case.scheme, case.order + 1))
    if not high >= low * (1 - 1e-9):
        _fail("rdp_nondecreasing_in_order", case, {f"D(α={case.order!r})": low, f"D(α={case.order + 1!r})": high}, "a larger order got a smaller RDP")


def _check_rdp_convex(accountant: Accountant, case: Case) -> None:
    """(α − 1)·D_α is convex in α (it is the log of E_Q[(P/Q)^α], a log-convex moment; van Erven &
    Harremoës 2014, Thm 11); checked at α, α + 1, α + 2."""
    a = case.order
    g = [(x - 1) * float(accountant.rdp(case.scheme, x)) for x in (a, a + 1, a + 2)]
    if not g[1] <= (g[0] + g[2]) / 2 + 1e-9 * max(abs(v) for v in g) + 1e-300:
        _fail("rdp_convexity", case, {f"(α−1)D_α at α={x!r}": v for x, v in zip((a, a + 1, a + 2), g)}, "(α − 1)·RDP is not convex in α")


# --- monotonicity -------------------------------------------------------------------------------------


def _check_delta_monotone(accountant: Accountant, case: Case) -> None:
    """ε(δ/10) >= ε(δ): ε(·) is non-increasing (δ(·) is, Steinke 2022 Prop 7)."""
    smaller = case.delta / 10.0
    eps, eps_small = _eps(accountant, case.scheme, case.delta), _eps(accountant, case.scheme, smaller)
    if not eps_small >= eps * (1.0 - 1e-12) - 1e-15:
        _fail("epsilon_nonincreasing_in_delta", case, {f"ε(δ={case.delta!r})": eps, f"ε(δ={smaller!r})": eps_small}, "a smaller δ got a smaller ε")


def _more_steps(scheme: Scheme) -> Scheme:
    if isinstance(scheme, Composed):
        return Composed(scheme.scheme, scheme.times + 1)
    if isinstance(scheme, Poisson):
        return dataclasses.replace(scheme, steps=scheme.steps + 1)
    return dataclasses.replace(scheme, epochs=scheme.epochs + 1)


def _check_pair(name: str, detail: str, accountant: Accountant, case: Case, larger: Scheme) -> None:
    """The accountant's ε for ``larger`` (a scheme that leaks at least as much) is >= its ε for case."""
    if not accountant.accepts(larger):
        return
    eps, eps_larger = _eps(accountant, case.scheme, case.delta), _eps(accountant, larger, case.delta)
    if not eps_larger >= eps * (1.0 - GRID_RTOL):
        _fail(name, case, {f"ε({case})": eps, f"ε({Case(larger, case.delta)})": eps_larger}, detail)


def _check_steps_monotone(accountant: Accountant, case: Case) -> None:
    """One more step (epoch) never lowers ε (post-processing: drop the last step)."""
    _check_pair("monotone_in_steps", "one more step lowered ε", accountant, case, _more_steps(case.scheme))


def _with_noise(scheme: Scheme, factor: float) -> Scheme:
    inner = scheme.scheme if isinstance(scheme, Composed) else scheme
    pair = inner.pair
    noisier = dataclasses.replace(pair, sigma=pair.sigma * factor) if isinstance(pair, Gaussian) else dataclasses.replace(pair, scale=pair.scale * factor)
    inner = dataclasses.replace(inner, pair=noisier)
    return dataclasses.replace(scheme, scheme=inner) if isinstance(scheme, Composed) else inner


def _check_noise_monotone(accountant: Accountant, case: Case) -> None:
    """Less noise never lowers ε: N(0, σ²) is N(0, σ'²) plus independent noise for σ' < σ
    (post-processing); likewise Laplace (its pair at scale b' < b dominates, Steinke 2022 §6)."""
    if not isinstance(_inner_pair(case.scheme), (Gaussian, Laplace)):
        return
    _check_pair("monotone_in_noise", "less noise (σ/1.25) gave a smaller ε", accountant, Case(_with_noise(case.scheme, 1.25), case.delta), case.scheme)


def _check_rate_monotone(accountant: Accountant, case: Case) -> None:
    """A larger Poisson rate never lowers ε: rate λ is rate λ' > λ followed by subsampling at λ/λ'
    (post-processing)."""
    scheme = case.scheme
    larger = dataclasses.replace(scheme, rate=min(1.0, scheme.rate * 1.5))
    _check_pair("monotone_in_rate", "a larger sampling rate gave a smaller ε", accountant, case, larger)


def _inner_pair(scheme: Scheme):
    return scheme.scheme.pair if isinstance(scheme, Composed) else scheme.pair


# --- identities ---------------------------------------------------------------------------------------


def _check_identity(name: str, detail: str, accountant: Accountant, case: Case, same: Scheme) -> None:
    if not accountant.accepts(same):
        return
    eps, eps_same = _eps(accountant, case.scheme, case.delta), _eps(accountant, same, case.delta)
    if not abs(eps - eps_same) <= IDENTITY_RTOL * max(abs(eps), abs(eps_same)) + 1e-12:
        _fail(name, case, {f"ε({case})": eps, f"ε({Case(same, case.delta)})": eps_same}, detail)


def _check_full_rate(accountant: Accountant, case: Case) -> None:
    """Poisson sampling at rate 1 for T steps is the T-fold composition of the step."""
    scheme = case.scheme
    full = dataclasses.replace(scheme, rate=1.0)
    same = Composed(Single(scheme.pair), scheme.steps) if scheme.steps > 1 else Single(scheme.pair)
    _check_identity("poisson_rate_one", "Poisson at rate 1 differs from plain composition", accountant, Case(full, case.delta), same)


def _check_allocation_one_step(accountant: Accountant, case: Case) -> None:
    """1-out-of-1 random allocation is one run of the step (Feldman & Shenfeld §2.1, t = 1)."""
    pair = case.scheme.pair
    _check_identity("allocation_t1", "Allocation(t=1, k=1) differs from a single step", accountant, Case(Allocation(pair, 1), case.delta), Single(pair))


def _check_allocation_full(accountant: Accountant, case: Case) -> None:
    """k-out-of-t allocation with k = t uses every element in every step: the t-fold composition."""
    pair, t = case.scheme.pair, case.scheme.steps
    same = Composed(Single(pair), t) if t > 1 else Single(pair)
    _check_identity("allocation_k_equals_t", "Allocation(t, k=t) differs from t-fold composition", accountant, Case(Allocation(pair, t, k=t), case.delta), same)


def _check_duality(accountant: Accountant, case: Case) -> None:
    """δ_{P‖Q}(ε) = 1 − e^ε + e^ε·δ_{Q‖P}(−ε) for both orientations (remove/add), ε = case.epsilon.

    Exact for any pair of probability distributions and real ε (proofs/hockey_stick_duality.py: per
    atom max(0, p − κq) − κ·max(0, q − p/κ) = p − κq, summed; notes/composition-and-subsampling.md
    §11.1 H6). Evaluated as e^ε·δ(−ε) − expm1(ε) to keep the cancellation in one place; tolerance
    :data:`IDENTITY_RTOL` relative plus :data:`DUALITY_ATOL`·e^ε absolute."""
    eps = case.epsilon
    for one, other in (("remove", "add"), ("add", "remove")):
        direct = float(accountant.directed_delta(case.scheme, eps, one))
        dual = math.exp(eps) * float(accountant.directed_delta(case.scheme, -eps, other)) - math.expm1(eps)
        if not abs(direct - dual) <= IDENTITY_RTOL * max(abs(direct), abs(dual)) + DUALITY_ATOL * math.exp(eps):
            _fail(
                "add_remove_duality",
                Case(case.scheme, case.delta, eps),
                {f"δ_{one}(ε={eps!r})": direct, f"1 − e^ε + e^ε·δ_{other}(−ε)": dual},
                f"at {case.at_epsilon()} the {one} curve and the {other} curve at −ε break the hockey-stick duality",
            )


CATALOGUE: tuple[Property, ...] = (
    Property(
        "soundness",
        "ε_acc(δ) >= verifier's rigorous lower bound on the true ε(δ)",
        "definition of (ε, δ)-DP; the bound is the best lower bound of verifier's registered methods",
        "inequality",
        (Single, Composed, Poisson, Allocation),
        "any accountant that understates ε (a wrong constant, a ⌈t/k⌉ for ⌊t/k⌋, a sensitivity off by 2)",
        _check_soundness,
    ),
    Property(
        "epsilon_nonincreasing_in_delta",
        "ε(δ/10) >= ε(δ)",
        "δ(ε) is non-increasing (Steinke 2022, Prop 7), so its inverse is",
        "inequality",
        (Single, Composed, Poisson, Allocation),
        "an inverse taken on the wrong side, or a δ/ε swap",
        _check_delta_monotone,
    ),
    Property(
        "monotone_in_steps",
        "ε(T + 1 steps) >= ε(T steps) (epochs for allocation)",
        "post-processing: the first T steps are a function of the T + 1",
        "inequality",
        (Composed, Poisson, Allocation),
        "a composition that divides where it should multiply, an off-by-one in the step count",
        _check_steps_monotone,
    ),
    Property(
        "monotone_in_noise",
        "ε(σ/1.25) >= ε(σ)",
        "post-processing: the noisier mechanism adds independent noise to the other",
        "inequality",
        (Single, Composed, Poisson, Allocation),
        "σ and 1/σ confused, a noise multiplier applied twice",
        _check_noise_monotone,
    ),
    Property(
        "monotone_in_rate",
        "ε(rate 1.5λ) >= ε(rate λ)",
        "post-processing: Poisson sampling at λ is sampling at λ' > λ, then at λ/λ'",
        "inequality",
        (Poisson,),
        "amplification applied to the wrong side, a rate used as its complement",
        _check_rate_monotone,
    ),
    Property(
        "poisson_rate_one",
        "Poisson(rate 1, T steps) = T-fold composition",
        "definition: rate 1 samples every element",
        "identity",
        (Poisson,),
        "a subsampling formula wrong at the boundary λ = 1",
        _check_full_rate,
        needs=(Composed,),
    ),
    Property(
        "allocation_t1",
        "Allocation(t = 1, k = 1) = Single",
        "Feldman & Shenfeld §2.1: with one step the element is in it",
        "identity",
        (Single,),
        "an allocation bound that is not tight at t = 1 by more than the tolerance",
        _check_allocation_one_step,
        needs=(Allocation,),
    ),
    Property(
        "allocation_k_equals_t",
        "Allocation(t, k = t) = t-fold composition",
        "definition: k = t puts the element in every step",
        "identity",
        (Allocation,),
        "a k-reduction with ⌈t/k⌉ or ⌊t/k⌋ applied where k = t",
        _check_allocation_full,
        needs=(Composed, Single),
    ),
)


CATALOGUE += (
    Property(
        "delta_soundness",
        "δ_acc(ε) >= verifier's rigorous lower bound on the true δ(ε)",
        "definition of (ε, δ)-DP (the hockey-stick divergence, Steinke 2022 Def 4)",
        "inequality",
        (Single, Composed, Poisson, Allocation),
        "a δ(ε) curve that understates the divergence (a missing factor, the wrong direction)",
        _check_delta_soundness,
        uses=("delta",),
    ),
    Property(
        "delta_nonincreasing_in_epsilon",
        "δ(ε + 1/2) <= δ(ε)",
        "H_{e^ε} is non-increasing in ε (Steinke 2022, Prop 7)",
        "inequality",
        (Single, Composed, Poisson, Allocation),
        "e^ε and e^-ε confused, a δ(ε) read off the wrong tail",
        _check_delta_monotone_in_epsilon,
        uses=("delta",),
    ),
    Property(
        "delta_convex_in_exp_epsilon",
        "δ(ln((e^ε + e^(ε+1))/2)) <= (δ(ε) + δ(ε+1))/2",
        "H_γ = E_Q[(P/Q − γ)_+] is convex in γ = e^ε (not in ε). A property of the exact curve: an upper "
        "bound that is a minimum of convex bounds (an RDP conversion over orders) may break it without being unsound",
        "inequality",
        (Single, Composed, Poisson, Allocation),
        "a δ(ε) spliced from pieces (flat, then decreasing: a concave kink)",
        _check_delta_convex,
        uses=("delta",),
    ),
    Property(
        "round_trip",
        "δ(ε(δ)) <= δ",
        "ε(δ) = inf{ε : δ(ε) <= δ} (Steinke 2022, §3)",
        "inequality",
        (Single, Composed, Poisson, Allocation),
        "an inverse taken on the wrong side of a grid or bisection",
        _check_round_trip,
        uses=("epsilon", "delta"),
    ),
    Property(
        "add_remove_duality",
        "δ_remove(ε) = 1 − e^ε + e^ε·δ_add(−ε), and with add and remove exchanged",
        "H_{e^ε}(P‖Q) = 1 − e^ε + e^ε·H_{e^{−ε}}(Q‖P) for all real ε: derivation and exact rational check in "
        "proofs/hockey_stick_duality.py (notes/composition-and-subsampling.md §11.1 H6 and §13 D1: complement the set S)",
        "identity",
        (Single, Composed, Poisson, Allocation),
        "one direction's δ curve returned for both (the direction ignored), an add curve derived from the remove "
        "curve with a wrong duality (e^{−ε} for e^ε, ε for −ε). An accountant that exchanges the two labels "
        "consistently is a relabelling the identity cannot see (delta_soundness per relation catches it)",
        _check_duality,
        uses=("directed_delta",),
    ),
    Property(
        "rdp_soundness",
        "RDP_acc(α) >= verifier's rigorous lower bound on D_α",
        "definition of RDP (Mironov 2017); D_α of a composition is the sum (van Erven & Harremoës 2014, Thm 28)",
        "inequality",
        (Single, Composed),
        "an RDP curve with a wrong constant (α/(4σ²) for α/(2σ²)) or sensitivity",
        _check_rdp_soundness,
        uses=("rdp",),
    ),
    Property(
        "rdp_nondecreasing_in_order",
        "D_(α+1) >= D_α",
        "van Erven & Harremoës 2014, Thm 3",
        "inequality",
        (Single, Composed, Poisson, Allocation),
        "an RDP curve divided by α where it should be multiplied",
        _check_rdp_monotone,
        uses=("rdp",),
    ),
    Property(
        "rdp_convexity",
        "(α − 1)·D_α is convex in α",
        "log-convexity of E_Q[(P/Q)^α] (van Erven & Harremoës 2014, Thm 11)",
        "inequality",
        (Single, Composed, Poisson, Allocation),
        "an RDP curve capped or clipped at some order, a bound spliced from two regimes",
        _check_rdp_convex,
        uses=("rdp",),
    ),
)


def by_name(name: str) -> Property:
    """The catalogue entry called ``name``."""
    for prop in CATALOGUE:
        if prop.name == name:
            return prop
    raise KeyError(f"no property {name!r} (catalogue: {', '.join(p.name for p in CATALOGUE)})")
