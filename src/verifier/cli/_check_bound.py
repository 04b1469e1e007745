"""``verifier check-bound``: search for parameters where a candidate bound crosses verifier's
rigorous bracket (see :mod:`verifier.properties.check_bound`) and report the worst violation.

The candidate is a built-in (``--builtin liew-lemma1``: the shuffled check-in paper's Lemma 1 as a
DP → RDP bound; ``--builtin classical-gaussian``: ε = √(2 ln(1.25/δ))/σ used at every σ) or a
Python callable ``--function MODULE:NAME`` of the ``--form`` given. Exit status: 1 refuted (a
violation was found), 0 none found (not a proof), 2 invalid input.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import json
import os
import sys
from typing import Callable

from verifier._validation import check_integer
from verifier.errors import InvalidArgument
from verifier.properties.check_bound import BUILTINS, BoundCheck, check_dp_to_rdp, check_epsilon_bound
from verifier.schemes import Composed, Poisson, Single
from verifier.cli import SUMMARIES
from verifier.cli._options import add_budget_option, whole_within_budget

__all__ = ["register", "load_function"]


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "check-bound",
        help=SUMMARIES["check-bound"],
        description="Grid + Hypothesis search for the worst violation of a candidate bound: an epsilon bound "
        "f(scheme, delta) (upper or lower) on Gaussian schemes, or a DP->RDP conversion f(order, epsilon, delta) "
        "against epsilon-randomized response. Exit status: 1 refuted, 0 no violation found, 2 invalid input.",
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--builtin", choices=sorted(BUILTINS), help="a candidate verifier knows by name")
    source.add_argument("--function", metavar="MODULE:NAME", help="a Python callable (importable module, attribute name)")
    parser.add_argument("--form", choices=("epsilon", "dp-to-rdp"), default="epsilon", help="what --function computes (default: epsilon)")
    parser.add_argument("--side", choices=("upper", "lower"), default="upper", help="the side an epsilon candidate claims (default: upper)")
    parser.add_argument("--examples", type=int, default=20, help="Hypothesis examples after the grid (default 20)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    add_budget_option(parser, whole=True)
    parser.set_defaults(handler=whole_within_budget(_run))


def load_function(spec: str) -> Callable[..., float]:
    """The callable ``MODULE:NAME``, looked up from the current directory too (as ``python -m``
    would: the README's ``--function mybounds:eps_upper`` runs next to ``mybounds.py``);
    :class:`InvalidArgument` when it cannot be imported. The returned callable turns any exception
    of the user's code, or a result that is not a number, into :class:`InvalidArgument` naming the
    function, its exception and the arguments (exit status 2: the user's bound is the bad input,
    not a defect in verifier)."""
    module_name, _, name = spec.partition(":")
    if not module_name or not name:
        raise InvalidArgument("function", spec, "must be MODULE:NAME (e.g. mybounds:epsilon_upper)")
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        function = getattr(importlib.import_module(module_name), name)
    except (ImportError, AttributeError) as exc:
        raise InvalidArgument("function", spec, f"cannot be loaded ({type(exc).__name__}: {exc})") from None
    except Exception as exc:  # noqa: BLE001 - the user's module failed while being imported
        raise InvalidArgument("function", spec, f"failed on import ({type(exc).__name__}: {exc})") from None
    if not callable(function):
        raise InvalidArgument("function", spec, "is not callable")

    @functools.wraps(function)
    def guarded(*args: object) -> float:
        try:
            return float(function(*args))
        except Exception as exc:  # noqa: BLE001 - whatever the user's code raises is bad input
            shown = ", ".join(str(a) for a in args)
            raise InvalidArgument("function", spec, f"raised {type(exc).__name__}: {exc} when called as {name}({shown})") from None

    return guarded


def _run(args: argparse.Namespace) -> int:
    examples = check_integer("examples", args.examples, minimum=0)
    if examples:
        try:
            import hypothesis  # noqa: F401
        except ImportError:
            raise InvalidArgument("examples", examples, "needs Hypothesis (pip install hypothesis); --examples 0 searches the grid only") from None
    if args.builtin:
        form, side, function, kinds = BUILTINS[args.builtin]
        name = args.builtin
    else:
        form, side, function, kinds = args.form, args.side, load_function(args.function), (Single, Composed, Poisson)
        name = args.function
    if form == "dp-to-rdp":
        result: BoundCheck = check_dp_to_rdp(function, examples=examples)
    else:
        result = check_epsilon_bound(function, side, examples=examples, kinds=kinds)
    if args.json:
        print(json.dumps({"candidate": name, **result.to_dict()}))
    elif result.refuted:
        print(f"REFUTED: {name} as a {side} bound ({form}) fails at {result.where}")
        print(f"  candidate = {result.candidate!r}, verifier's rigorous bracket [{result.bracket.lower!r}, {result.bracket.upper!r}]")
        print(f"  worst violation {result.violation!r} over {result.points} points")
    else:
        print(f"no violation found: {name} as a {side} bound ({form}) holds at the {result.points} points tried (not a proof)")
    return 1 if result.refuted else 0
