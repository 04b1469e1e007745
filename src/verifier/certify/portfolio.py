"""Running the applicable methods for one question and combining their bounds.

For each direction, the best rigorous bracket is [max of lower bounds, min of upper bounds]; a
lower bound above an upper bound for the same question is a defect in verifier and raises
:class:`~verifier.errors.InconsistentBounds` naming both bounds. "Both directions" is the maximum
of the per-direction brackets (Feldman & Shenfeld, Def 2.2).

Methods run cheapest first (:attr:`Method.cost`). A caller that only needs to *decide* something
(the certifier) passes ``settled``, a predicate on the bounds gathered so far: once it holds, the
remaining (more expensive) methods are not run. ``time_budget`` (seconds) bounds the wall-clock
time of methods of cost >= 1: none is started once the budget is spent, and one still running when
it runs out is interrupted (SIGALRM, in the main thread of a Unix process; elsewhere the budget is
only checked between methods, and a compiled loop that holds the interpreter delays the interrupt
until it returns). An interrupted call contributes no bound. Cost-0 methods (closed forms,
microseconds) always run, under the same deadline (at least CLOSED_FORM_GRACE of the budget, so a
closed form at an extreme parameter, e.g. e^ε0 with ε0 = 1e308, cannot hold the run past it). Every method not run is listed in
``Collected.skipped`` with the reason, as is a method that declined (NotApplicable) or could not
reach its guarantee (NumericalFailure): fewer bounds make a wider bracket, never a wrong one.
"""

from __future__ import annotations

import contextlib
import math
import signal
import threading
import time
from dataclasses import dataclass, replace
from typing import Callable, Iterator, Sequence, TypeVar

from verifier._budget import ACTIVITY, deadline
from verifier._types import Bound, Bracket, Direction, Estimate, Quantity, Side
from verifier._validation import check_nonnegative
from verifier.certify.method import Guarantee, Method
from verifier.certify.registry import methods_for
from verifier.errors import InconsistentBounds, InvalidArgument, NotApplicable, NumericalFailure
from verifier.schemes import Scheme

__all__ = ["Collected", "collect_bounds", "best_bracket", "best_bounds", "select_methods", "call_within", "cut_by_budget"]


_T = TypeVar("_T")


class _BudgetSpent(BaseException):
    """Raised into a running method when the time budget runs out (a BaseException, so a method's
    own ``except Exception`` cannot swallow it)."""


#: After the budget's interrupt fires it fires again this often until the method has stopped.
REARM_SECONDS = 0.05


@contextlib.contextmanager
def _deadline(seconds: float | None) -> Iterator[None]:
    """Raise :class:`_BudgetSpent` after ``seconds`` of wall-clock time, where SIGALRM can deliver
    it (:func:`_alarm`); either way :func:`verifier._budget.seconds_left` tells the method how long
    it has."""
    with deadline(seconds), _alarm(seconds):
        yield


@contextlib.contextmanager
def _alarm(seconds: float | None) -> Iterator[None]:
    """Raise :class:`_BudgetSpent` after ``seconds`` of wall-clock time, where SIGALRM can deliver
    it (main thread, Unix); otherwise do nothing (the budget is then checked between methods)."""
    usable = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    if seconds is None or not usable:
        yield
        return

    def interrupt(signum, frame):
        # Re-arm first: an exception raised where Python cannot propagate it (a gc callback, a
        # __del__) is printed and dropped, and the method would run on past the budget.
        signal.setitimer(signal.ITIMER_REAL, REARM_SECONDS)
        raise _BudgetSpent()

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, max(seconds, 1e-3))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)

def _interrupted(exc: BaseException) -> bool:
    """Whether ``exc`` is the budget's interrupt, possibly wrapped by a compiled callback (python-flint
    turns an exception raised in an integrand into a SystemError whose cause is the interrupt)."""
    while exc is not None:
        if isinstance(exc, _BudgetSpent):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def call_within(seconds: float | None, call: Callable[[], _T]) -> _T | None:
    """``call()`` under the same deadline as a method (interrupted when ``seconds`` run out, where
    SIGALRM can deliver it); None when the deadline interrupted it. For work beside the methods
    that must obey a command's ``--time-budget`` too (``verifier compare``'s Poisson curve)."""
    try:
        with _deadline(seconds):
            return call()
    except BaseException as exc:  # noqa: BLE001 - only the budget's own interrupt is swallowed
        if _interrupted(exc):
            return None
        raise


#: Words of a ``Collected.skipped`` entry for a method the time budget stopped or never started.
_BUDGET_WORDS = ("time budget of", "of the time budget left")


def cut_by_budget(skipped: Sequence[str]) -> set[str]:
    """The names of the methods that ``skipped`` says the time budget stopped or never started
    (interrupted, or not run because the budget was spent), as opposed to methods that declined."""
    return {entry.split(":")[0].split(" (")[0] for entry in skipped if any(w in entry for w in _BUDGET_WORDS)}


#: A predicate on the bounds gathered so far; True once the question is decided.
Settled = Callable[[Sequence[Bound]], bool]


@dataclass(frozen=True)
class Collected:
    """Every bound each method gave for one question, and the best bracket per direction.

    ``ran`` names the methods that were run (in order), ``skipped`` says why the others were not
    (or which direction a method declined), ``estimates`` holds statistical estimates of δ from
    ESTIMATE methods (reported beside the bounds, never part of a bracket). ``beside`` holds the
    bounds on ε at the claimed δ that methods gave from the same computation when the question was a
    claim's (:meth:`Method.claim_bounds`); they are not part of ``brackets``.
    """

    quantity: Quantity
    at: float
    bounds: tuple[Bound, ...]
    brackets: dict  # Direction -> Bracket
    skipped: tuple[str, ...] = ()
    ran: tuple[str, ...] = ()
    estimates: tuple[Estimate, ...] = ()
    seconds: float = 0.0
    beside: tuple[Bound, ...] = ()

    @property
    def combined(self) -> Bracket:
        """Bracket of the maximum over the requested directions."""
        values = list(self.brackets.values())
        return Bracket(max(b.lower for b in values), max(b.upper for b in values))


def best_bounds(bounds: Sequence[Bound], direction: Direction) -> tuple[Bound | None, Bound | None]:
    """(largest lower bound, smallest upper bound) among ``bounds`` in ``direction``; None where a
    side has no bound. Raises :class:`InconsistentBounds`, naming both methods, if the lower bound
    exceeds the upper bound."""
    mine = [b for b in bounds if b.direction is direction]
    best_upper = min((b for b in mine if b.side is Side.UPPER), key=lambda b: b.value, default=None)
    best_lower = max((b for b in mine if b.side is Side.LOWER), key=lambda b: b.value, default=None)
    if best_upper is not None and best_lower is not None and best_lower.value > best_upper.value:
        raise InconsistentBounds(
            f"{direction.value} {best_lower.quantity.value} at {best_lower.at!r}: lower bound "
            f"{best_lower.value!r} from {best_lower.method} exceeds upper bound {best_upper.value!r} "
            f"from {best_upper.method}"
        )
    return best_lower, best_upper


def best_bracket(bounds: Sequence[Bound], direction: Direction) -> Bracket:
    """[max lower, min upper] over the bounds in ``direction``; (−∞ or 0, +∞) where a side is missing.

    Raises :class:`InconsistentBounds` if some upper bound lies below some lower bound.
    """
    mine = [b for b in bounds if b.direction is direction]
    floor = 0.0 if (mine and mine[0].quantity is not Quantity.EPSILON) else -math.inf
    best_lower, best_upper = best_bounds(mine, direction)
    upper = best_upper.value if best_upper else math.inf
    lower = best_lower.value if best_lower else floor
    return Bracket(lower, upper)


def select_methods(scheme: Scheme, only: Sequence[str] | None = None) -> list[Method]:
    """The registered methods that support ``scheme`` (restricted to the names in ``only``),
    cheapest first. Raises :class:`InvalidArgument` for a name in ``only`` that does not apply."""
    methods: list[Method] = methods_for(scheme)
    if only:
        unknown = set(only) - {m.name for m in methods}
        if unknown:
            available = ", ".join(sorted({m.name for m in methods})) or "none"
            raise InvalidArgument("method", ",".join(sorted(unknown)), f"must be one of the methods that apply here: {available}")
        methods = [m for m in methods if m.name in only]
    return methods


#: Share of the rigorous methods' time that statistical estimates may take (all directions together),
#: and the least they get: the independent evidence is reported beside every verdict but never
#: dominates the run (issue 17). Without a rigorous method before them they use their own default.
ESTIMATE_SHARE = 0.5
ESTIMATE_FLOOR_SECONDS = 0.05


#: Share of the time budget a closed form (cost 0) may still use once the budget is spent: a run
#: ends within (1 + CLOSED_FORM_GRACE)·budget plus the time to print (issue 19: at most 10% over).
CLOSED_FORM_GRACE = 0.05
#: ... and at least this long (a zero budget still runs the closed forms, as documented).
CLOSED_FORM_MIN_SECONDS = 1.0

#: Longest an estimate-only method (Monte Carlo evidence) may plan to run when no time budget is
#: given: one whose smallest sample already costs more declines with its estimate instead.
ESTIMATE_MAX_SECONDS = 60.0


def _least(*limits: float | None) -> float | None:
    """The smallest of the given time limits (None: no limit)."""
    given = [x for x in limits if x is not None]
    return min(given) if given else None


def _estimate_allowance(rigorous_seconds: float, directions: int) -> float:
    return max(ESTIMATE_FLOOR_SECONDS, ESTIMATE_SHARE * rigorous_seconds) / max(directions, 1)


def collect_bounds(
    scheme: Scheme,
    quantity: Quantity,
    at: float,
    directions: Sequence[Direction],
    *,
    only: Sequence[str] | None = None,
    settled: Settled | None = None,
    time_budget: float | None = None,
    claimed_delta: float | None = None,
) -> Collected:
    """Run every registered method that supports ``scheme`` (or only those named in ``only``),
    cheapest first, and collect their bounds on ``quantity`` at ``at`` for each direction.

    With ``settled``, stop starting methods that give rigorous bounds once ``settled(bounds so far)``
    holds; estimate-only methods (Monte Carlo) still run, because their independent evidence is
    reported beside every verdict. With ``time_budget`` (seconds), stop starting methods of cost >= 1
    once the budget is spent (see the module docstring). Statistical estimates of δ are collected
    from ESTIMATE methods that run, each given a time allowance of ESTIMATE_SHARE of the time the
    rigorous methods before it took (at least ESTIMATE_FLOOR_SECONDS, split over the directions).

    With ``claimed_delta`` (``quantity`` must be DELTA: the question is the claim (``at``,
    ``claimed_delta``)), each method answers through :meth:`Method.claim_bounds`, which may stop
    refining once its own brackets decide the claim and may give bounds on ε(claimed δ) as well: those
    go to ``Collected.beside``, and ``settled`` is asked about the δ and ε bounds together.
    """
    if claimed_delta is not None and quantity is not Quantity.DELTA:
        raise InvalidArgument("quantity", quantity.value, "claimed_delta goes with bounds on δ at the claimed ε")
    if time_budget is not None:
        time_budget = check_nonnegative("time_budget", time_budget)
    methods = select_methods(scheme, only)
    if not methods:
        raise InvalidArgument("scheme", scheme, "no registered method supports this scheme")
    bounds: list[Bound] = []
    beside: list[Bound] = []
    estimates: list[Estimate] = []
    skipped: list[str] = []
    ran: list[str] = []
    started = time.perf_counter()
    rigorous_seconds = 0.0  # time the bound-giving methods took: Monte Carlo gets a share of it
    for method in methods:
        estimate_only = method.returns == frozenset({Guarantee.ESTIMATE})
        if settled is not None and not estimate_only and settled(bounds + beside):
            skipped.append(f"{method.name}: not run, the question was already decided by cheaper methods")
            continue
        spent = time.perf_counter() - started
        if time_budget is not None and method.cost > 0 and spent >= time_budget:
            skipped.append(f"{method.name}: not run, time budget of {time_budget:g} s spent ({spent:.3g} s)")
            continue
        ran.append(method.name)
        declined_everywhere = True
        for direction in directions:
            start = time.perf_counter()
            left = None if time_budget is None else time_budget - (start - started)
            if left is not None and method.cost == 0:  # closed forms always start, with a grace
                left = max(left, CLOSED_FORM_GRACE * time_budget, CLOSED_FORM_MIN_SECONDS)
            if left is not None and left <= 0:
                skipped.append(f"{method.name} ({direction.value}): not run, time budget of {time_budget:g} s spent")
                continue
            allowance = None
            if quantity is Quantity.DELTA and Guarantee.ESTIMATE in method.returns:
                allowance = _estimate_allowance(rigorous_seconds, len(directions)) if rigorous_seconds > 0 else None
            declined = method.declines(scheme, _least(left, ESTIMATE_MAX_SECONDS if estimate_only else None))
            if declined:
                skipped.append(f"{method.name} ({direction.value}): {declined}")
                continue
            declined_everywhere = False
            ACTIVITY.set(f"{method.name} ({direction.value})")
            try:
                with _deadline(left):
                    if quantity is Quantity.DELTA:
                        if claimed_delta is None:
                            got = method.delta_bounds(scheme, at, direction)
                        else:
                            got, also = method.claim_bounds(scheme, at, claimed_delta, direction)
                            beside.extend(replace(b, seconds=time.perf_counter() - start) for b in also)
                        if Guarantee.ESTIMATE in method.returns:  # inside the deadline: estimates obey the budget too
                            estimates.extend(method.delta_estimates(scheme, at, direction, seconds=allowance))
                    elif quantity is Quantity.RHO:
                        got = method.rho_bounds(scheme, direction)
                    elif quantity is Quantity.TPR:
                        got = method.tpr_bounds(scheme, at, direction)
                    elif at == 0.0 and not method.answers_pure_dp:
                        raise NotApplicable("bounds ε(δ) for δ in (0, 1) only, not ε(0), the largest privacy loss")
                    else:
                        others = tuple(d for d in directions if d is not direction)
                        got = method.epsilon_bounds_beside(scheme, at, direction, others)
            except (_BudgetSpent, SystemError) as exc:
                if not _interrupted(exc):
                    raise
                skipped.append(f"{method.name} ({direction.value}): interrupted, time budget of {time_budget:g} s spent")
                continue
            except NotApplicable as exc:
                skipped.append(f"{method.name} ({direction.value}): {exc}")
                continue
            except NumericalFailure as exc:  # no bound is not a wrong bound: record it, keep the others
                skipped.append(f"{method.name} ({direction.value}) failed: {type(exc).__name__}: {exc}")
                continue
            elapsed = time.perf_counter() - start
            bounds.extend(replace(b, seconds=elapsed) for b in got)
            if not estimate_only:
                rigorous_seconds += elapsed
        if declined_everywhere:
            ran.remove(method.name)
    brackets = {d: best_bracket(bounds, d) for d in directions}
    return Collected(
        quantity, at, tuple(bounds), brackets, tuple(skipped), tuple(ran), tuple(estimates), time.perf_counter() - started, tuple(beside)
    )
