"""An accountant under test, the cases it is asked about, and verifier's rigorous answer to them.

An *accountant* is any callable ``epsilon(scheme, delta) -> float`` that claims the scheme is
(ε, δ)-DP for the neighbouring relation it states (the relations of :mod:`verifier.certify.claim`).
verifier's answer to the same question is a rigorous bracket on the true ε(δ) (the best lower and
upper bounds of every registered method that gives rigorous bounds; Monte Carlo estimates are not
used), so an accountant whose ε lies below verifier's lower bound is *unsound* at that case.

A case is expressed as a claim (:func:`claim_for`), so every finding comes with the
``verifier certify`` command that reproduces it.
"""

from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass, field
from typing import Callable

from verifier._types import Bracket, Quantity, Side
from verifier.certify.claim import NEIGHBORING, Claim, parse_claim
from verifier.certify.portfolio import best_bracket, collect_bounds, select_methods
from verifier.errors import InvalidArgument
from verifier.pairs import ApproxDP, DominatingPair, Gaussian, Laplace, RandomizedResponse
from verifier.schemes import Allocation, Composed, Poisson, Scheme, Single

__all__ = ["Accountant", "Case", "claim_for", "certify_command", "rigorous_epsilon", "rigorous_delta", "rigorous_renyi", "claim_epsilon", "EpsilonFunction", "SETTLED_RTOL", "FLAG_MECHANISMS"]

#: Relative width at which verifier's bracket counts as exact and slower methods are not run.
SETTLED_RTOL = 1e-9

#: ``epsilon(scheme, delta)``: the accountant's ε for ``scheme`` at ``delta``.
EpsilonFunction = Callable[[Scheme, float], float]


@dataclass(frozen=True)
class Accountant:
    """An accountant to test: its functions (``epsilon(scheme, δ)``, and optionally
    ``delta(scheme, ε)``, ``rdp(scheme, α)`` and ``directed_delta(scheme, ε, direction)``; at least one), the schemes and pairs it accepts,
    and the relation it claims for (one of :data:`~verifier.certify.claim.NEIGHBORING`). Each
    catalogue property needs one of the functions and runs where it is given.

    ``schemes`` are classes of :mod:`verifier.schemes` (a :class:`Composed` is of a :class:`Single`);
    ``pairs`` classes of :mod:`verifier.pairs`. Strategies only draw cases inside both.
    """

    name: str
    epsilon: EpsilonFunction | None
    schemes: tuple[type, ...] = (Single, Composed, Poisson)
    pairs: tuple[type, ...] = (Gaussian,)
    neighboring: str = "add_or_remove"
    delta: Callable[[Scheme, float], float] | None = field(default=None, compare=False)
    rdp: Callable[[Scheme, float], float] | None = field(default=None, compare=False)
    #: ``directed_delta(scheme, ε, direction)``: the accountant's δ(ε) for one direction,
    #: ``"remove"`` (H_{e^ε}(P‖Q), P the output with the record) or ``"add"`` (H_{e^ε}(Q‖P)), at
    #: any real ε (the duality property asks at −ε).
    directed_delta: Callable[[Scheme, float, str], float] | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.neighboring not in NEIGHBORING:
            raise InvalidArgument("neighboring", self.neighboring, f"must be one of {', '.join(NEIGHBORING)}")
        for name in ("epsilon", "delta", "rdp", "directed_delta"):
            if getattr(self, name) is not None and not callable(getattr(self, name)):
                raise InvalidArgument(name, getattr(self, name), f"must be a callable {name}(scheme, x) -> float or None")
        if all(getattr(self, name) is None for name in ("epsilon", "delta", "rdp", "directed_delta")):
            raise InvalidArgument("epsilon", None, "an accountant needs at least one of epsilon, delta, rdp, directed_delta")
        for kind in self.schemes:
            if kind not in (Single, Composed, Poisson, Allocation):
                raise InvalidArgument("schemes", kind, "must list scheme classes (Single, Composed, Poisson, Allocation)")

    def accepts(self, scheme: Scheme) -> bool:
        """Whether ``scheme`` is of a kind the accountant declared."""
        if type(scheme) not in self.schemes:
            return False
        if isinstance(scheme, Composed):
            if not isinstance(scheme.scheme, Single):
                return False
            scheme = scheme.scheme
        return isinstance(scheme.pair, self.pairs)


@dataclass(frozen=True)
class Case:
    """One question put to an accountant about ``scheme``: ε at ``delta``; δ at ``epsilon`` and
    D_α at ``order`` for the properties of δ(ε) and RDP curves."""

    scheme: Scheme
    delta: float
    epsilon: float = 1.0
    order: float = 2.0

    def __str__(self) -> str:
        return f"{_scheme_text(self.scheme)}, δ={self.delta!r}"

    def at_epsilon(self) -> str:
        return f"{_scheme_text(self.scheme)}, ε={self.epsilon!r}"

    def at_order(self) -> str:
        return f"{_scheme_text(self.scheme)}, α={self.order!r}"


def _pair_object(pair: DominatingPair) -> dict:
    if isinstance(pair, Gaussian):
        return {"name": "gaussian", "sigma": pair.sigma, "sensitivity": pair.sensitivity}
    if isinstance(pair, Laplace):
        return {"name": "laplace", "scale": pair.scale, "sensitivity": pair.sensitivity}
    if isinstance(pair, RandomizedResponse):
        return {"name": "rr", "epsilon0": pair.epsilon0, "k": pair.k}
    if isinstance(pair, ApproxDP):
        return {"name": "approx_dp", "epsilon0": pair.epsilon0, "delta0": pair.delta0}
    raise InvalidArgument("pair", pair, "has no claim form (gaussian, laplace, rr, approx_dp)")


def _scheme_object(scheme: Scheme) -> tuple[dict, DominatingPair]:
    if isinstance(scheme, Single):
        return {"name": "single"}, scheme.pair
    if isinstance(scheme, Composed) and isinstance(scheme.scheme, Single):
        return {"name": "composed", "times": scheme.times}, scheme.scheme.pair
    if isinstance(scheme, Poisson):
        return {"name": "poisson", "rate": scheme.rate, "steps": scheme.steps}, scheme.pair
    if isinstance(scheme, Allocation):
        return {"name": "allocation", "steps": scheme.steps, "k": scheme.k, "epochs": scheme.epochs}, scheme.pair
    raise InvalidArgument("scheme", scheme, "has no claim form (single, composed of a single step, poisson, allocation)")


def _scheme_text(scheme: Scheme) -> str:
    obj, pair = _scheme_object(scheme)
    params = ", ".join(f"{k}={v!r}" for k, v in {**_pair_object(pair), **obj}.items() if k != "name")
    return f"{_pair_object(pair)['name']} {obj['name']}({params})"


def claim_for(scheme: Scheme, neighboring: str, epsilon: float, delta: float, source: str = "") -> Claim:
    """The claim "``scheme`` is (``epsilon``, ``delta``)-DP under ``neighboring``", validated.

    For ``replace_one`` the scheme's pair carries the per-record sensitivity Δ (the claim models a
    replacement as add/remove with 2Δ). Raises :class:`InvalidArgument` for a scheme or pair that
    has no claim form.
    """
    scheme_obj, pair = _scheme_object(scheme)
    obj = {"mechanism": _pair_object(pair), "scheme": scheme_obj, "neighboring": neighboring, "epsilon": epsilon, "delta": delta}
    if source:
        obj["source"] = source
    return parse_claim(obj)


#: The mechanisms ``verifier certify`` takes as flags (verifier.cli._options.MECHANISMS); the others
#: (finite pairs, mixtures, …) are written as a claim file.
FLAG_MECHANISMS = ("gaussian", "laplace", "rr", "approx_dp")


def certify_command(claim: Claim) -> str:
    """The ``verifier certify`` command line that decides ``claim`` (for a sequence or a
    repeat-and-select, which have no flags, the claim file and its JSON)."""
    if claim.scheme["name"] == "sequence" or "run" in claim.scheme or claim.mechanism["name"] not in FLAG_MECHANISMS:
        return f"verifier certify claim.json   # claim.json: {json.dumps(claim.to_dict())}"
    flags = [f"--mechanism {claim.mechanism['name']}"]
    flags += [f"--{k.replace('_', '-')} {v!r}" for k, v in claim.mechanism.items() if k != "name"]
    flags.append(f"--scheme {claim.scheme['name']}")
    flags += [f"--{k.replace('_', '-')} {v!r}" for k, v in claim.scheme.items() if k != "name" and not isinstance(v, bool)]
    flags += [f"--{k.replace('_', '-')}" for k, v in claim.scheme.items() if v is True]  # a flag (shuffled's drop_last)
    flags.append(f"--neighboring {claim.neighboring}")
    if claim.tpr is not None:  # a trade-off claim
        flags += [f"--fpr {claim.fpr!r}", f"--claim-tpr {claim.tpr!r}"]
    else:
        flags += [f"--epsilon {claim.epsilon!r}", f"--delta {claim.delta!r}"]
    return "verifier certify " + " ".join(flags)


@functools.lru_cache(maxsize=4096)
def rigorous_epsilon(scheme: Scheme, delta: float, neighboring: str = "add_or_remove") -> Bracket:
    """verifier's rigorous bracket on ε(δ) of ``scheme`` under ``neighboring`` (see
    :func:`claim_epsilon`). Cached: Hypothesis asks again while it shrinks."""
    return claim_epsilon(claim_for(scheme, neighboring, 1.0, delta))


@functools.lru_cache(maxsize=4096)
def rigorous_delta(scheme: Scheme, epsilon: float, neighboring: str = "add_or_remove") -> Bracket:
    """verifier's rigorous bracket on δ(``epsilon``) of ``scheme`` under ``neighboring`` (the same
    methods as :func:`claim_epsilon`), maximised over the required directions."""
    claim = claim_for(scheme, neighboring, epsilon, 0.5)
    return _collect(claim, Quantity.DELTA, epsilon)


def rigorous_renyi(scheme: Scheme, order: float, neighboring: str = "add_or_remove") -> Bracket:
    """verifier's rigorous bracket on D_α of a single or composed step (the pair's Rényi divergence
    in ball arithmetic, times the number of steps: Rényi divergences of products add; van Erven &
    Harremoës 2014, Thm 28), maximised over the required directions. Other schemes are refused."""
    claim = claim_for(scheme, neighboring, 1.0, 0.5)
    model = claim.model
    times = 1
    if isinstance(model, Composed):
        model, times = model.scheme, model.times
    if not isinstance(model, Single):
        raise InvalidArgument("scheme", scheme, "rigorous Rényi brackets are computed here for single and composed steps only")
    brackets = [model.pair.renyi(order, d) for d in claim.directions]
    return Bracket(times * max(b.lower for b in brackets), times * max(b.upper for b in brackets))


def claim_epsilon(claim: Claim) -> Bracket:
    """verifier's rigorous bracket on ε(claimed δ) of the claim's model: the largest lower and
    smallest upper bound of the registered methods that give rigorous lower bounds or are cheap
    (cost <= 1: closed forms, the RDP and zCDP accountants), maximised over the directions the
    relation requires (Feldman & Shenfeld, Def 2.2). Upper-only methods of cost >= 2 (the slower
    analytic theorems) are left out: they cannot move the lower bound, which is what decides
    soundness. Once a closed form pins ε down to :data:`SETTLED_RTOL`, nothing slower runs."""
    return _collect(claim, Quantity.EPSILON, claim.delta)


def _collect(claim: Claim, quantity: Quantity, at: float) -> Bracket:
    rigorous = [m.name for m in select_methods(claim.model) if Side.LOWER in m.sides() or (m.sides() and m.cost <= 1)]
    directions = claim.directions

    def settled(bounds) -> bool:
        brackets = [best_bracket(bounds, d) for d in directions]
        return all(math.isfinite(b.upper - b.lower) and b.upper - b.lower <= SETTLED_RTOL * abs(b.upper) for b in brackets)

    return collect_bounds(claim.model, quantity, at, directions, only=rigorous, settled=settled).combined
