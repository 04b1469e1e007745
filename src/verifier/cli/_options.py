"""Command-line options shared by sub-commands: the mechanism (a dominating pair), the direction,
and the output format; and the printers for results."""

from __future__ import annotations

import argparse
import json
import math
from typing import Callable, Sequence

from verifier._types import Bound, Direction, directions_for, json_number
from verifier._validation import check_integer
from verifier.cli._table import table_number
from verifier.errors import InvalidArgument, NotApplicable
from verifier.pairs import ApproxDP, DominatingPair, Gaussian, Laplace, RandomizedResponse, replace_one_pair
from verifier.schemes import AGGREGATIONS, Allocation, BandedPoisson, CheckIn, Composed, MatrixMechanism, MatrixPoisson, Poisson, Scheme, Shuffle, Single
from verifier.schemes import WithoutReplacement
from verifier.matrix.strategy import Strategy

__all__ = [
    "add_mechanism_options",
    "add_scheme_options",
    "add_method_option",
    "add_output_options",
    "add_direction_option",
    "build_pair",
    "build_scheme",
    "check_option_uses",
    "scheme_notes",
    "number_list",
    "requested_directions",
    "model_json_from_flags",
    "emit",
    "refuse_option",
    "add_budget_option",
    "budget_of",
    "budget_lines",
    "whole_within_budget",
    "EXIT_BUDGET_SPENT",
]

MECHANISMS = ("gaussian", "laplace", "rr", "approx_dp")


def add_mechanism_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("mechanism (one step)")
    group.add_argument("--mechanism", choices=MECHANISMS, default="gaussian", help="the step's mechanism (default: gaussian)")
    group.add_argument("--sigma", "--noise-multiplier", dest="sigma", type=float, help="gaussian: noise standard deviation σ > 0 (--noise-multiplier: the peers' name)")
    group.add_argument("--scale", type=float, help="laplace: noise scale b > 0")
    group.add_argument("--sensitivity", type=float, default=1.0, help="gaussian/laplace: Δ > 0, the bound on one record's norm, e.g. the clipping norm (default 1); "
                       "the step's pair is shifted by Δ under add/remove and by 2Δ under replace_one: do not double it")
    group.add_argument("--epsilon0", type=float, help="rr: randomized-response parameter ε0 > 0; approx_dp: the step's ε0 >= 0")
    group.add_argument("--delta0", type=float, help="approx_dp: the step's δ0 in [0, 1) (any (ε0, δ0)-DP mechanism)")
    group.add_argument("--k", type=int, default=None, help="rr: number of outcomes (default 2); allocation: steps per element")


SCHEMES = (
    "single", "composed", "poisson", "allocation", "shuffle", "checkin", "matrix", "without_replacement", "shuffled", "banded_poisson",
    "matrix_poisson", "truncated_poisson", "with_replacement",
)


def add_scheme_options(parser: argparse.ArgumentParser, method: bool = True) -> None:
    """The scheme options, and ``--method`` (listing the registered names) unless ``method`` is false:
    a command that runs no registered method (mc, rdp, zcdp) does not offer it, rather than refusing
    or ignoring every value (issue 32)."""
    group = parser.add_argument_group("scheme (how steps are sampled and composed)")
    group.add_argument("--scheme", choices=SCHEMES, default="single", help="sampling/composition scheme (default: single)")
    group.add_argument("--times", type=int, help="composed: number of compositions m >= 1")
    group.add_argument(
        "--rate", "--sampling-probability", "--sample-rate", dest="rate", type=float,
        help="poisson/banded_poisson/matrix_poisson/truncated_poisson: sampling probability λ in (0, 1]; checkin: check-in rate γ in (0, 1] "
        "(--sampling-probability, --sample-rate: the peers' names)",
    )
    group.add_argument(
        "--steps", "--num-steps", dest="steps", type=int,
        help="poisson/allocation/without_replacement/banded_poisson/matrix_poisson/truncated_poisson/with_replacement: number of steps t >= 1 "
        "(--num-steps: the peers' name)",
    )
    group.add_argument(
        "--dataset-size", dest="dataset_size", type=int, help="without_replacement/shuffled/truncated_poisson/with_replacement: number of elements n >= 1"
    )
    group.add_argument(
        "--batch-size", dest="batch_size", type=int,
        help="without_replacement/shuffled: fixed batch size B in [1, n] (replace-one neighbours; the step's pair gets sensitivity 2Δ)",
    )
    group.add_argument(
        "--max-batch", dest="max_batch", type=int,
        help="truncated_poisson: the batch cap B >= 1 (a Poisson draw of more than B records keeps a uniform B-subset; gaussian only)",
    )
    group.add_argument(
        "--sample-size", dest="sample_size", type=int,
        help="with_replacement: records drawn per step m >= 1, uniformly with replacement (replace-one neighbours; gaussian only)",
    )
    group.add_argument(
        "--drop-last", dest="drop_last", action="store_true",
        help="shuffled: the last n mod B elements of each epoch are not used (default: they form a smaller batch)",
    )
    group.add_argument("--epochs", type=int, default=1, help="allocation/matrix/shuffled: number of epochs (default 1)")
    group.add_argument("--users", type=int, help="shuffle/checkin: number of users n >= 1 (one report each)")
    group.add_argument(
        "--dimension", help='shuffle: coordinates d >= 1 of each gaussian report, or "any" (default: any; the privacy blanket needs d)'
    )
    group.add_argument("--rounds", type=int, default=1, help="checkin: number of rounds T (default 1)")
    group.add_argument(
        "--aggregation", choices=AGGREGATIONS, default="shuffle", help="checkin: reports released shuffled (default) or only their sum"
    )
    group.add_argument("--batches", type=int, help="matrix: batches per epoch b >= 1 (N = epochs·batches steps)")
    group.add_argument(
        "--groups", type=int,
        help="banded_poisson: groups b >= the strategy's bandwidth; matrix_poisson: groups b >= 1 (default 1) (step i samples group i mod b, each record with probability --rate)",
    )
    group.add_argument("--matrix", help="matrix: strategy family (identity, bsr, toeplitz, blt)")
    group.add_argument("--matrix-file", dest="matrix_file", help="matrix: strategy C from a .npy or .csv file (N×N, lower-triangular)")
    group.add_argument("--bands", type=int, help="matrix bsr: number of bands p >= 1")
    group.add_argument("--coefficients", help="matrix toeplitz: comma-separated c_0,c_1,…")
    group.add_argument("--theta", help="matrix blt: comma-separated buffer decays θ_j")
    group.add_argument("--omega", help="matrix blt: comma-separated buffer weights ω_j")
    if method:
        add_method_option(group)


def add_method_option(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """``--method NAME`` (repeatable); the help lists every registered method's name."""
    from verifier.certify.registry import all_methods

    names = ", ".join(sorted({m.name for m in all_methods()}))
    parser.add_argument(
        "--method",
        action="append",
        metavar="NAME",
        help=f"use only this method (repeatable; default: every method that applies). Names: {names}",
    )


#: Each mechanism or scheme option (its ``dest``): the ``--mechanism`` / ``--scheme`` choices it
#: applies to, and its default (an option at its default counts as not given).
#: tests/cli/test_scheme_options.py checks the table against the claim schema's fields.
OPTION_USES: dict[str, tuple[dict[str, tuple[str, ...]], object]] = {
    "sigma": ({"mechanism": ("gaussian",)}, None),
    "scale": ({"mechanism": ("laplace",)}, None),
    "sensitivity": ({"mechanism": ("gaussian", "laplace")}, 1.0),
    "epsilon0": ({"mechanism": ("rr", "approx_dp")}, None),
    "delta0": ({"mechanism": ("approx_dp",)}, None),
    "k": ({"mechanism": ("rr",), "scheme": ("allocation",)}, None),
    "times": ({"scheme": ("composed",)}, None),
    "rate": ({"scheme": ("poisson", "checkin", "banded_poisson", "matrix_poisson", "truncated_poisson")}, None),
    "steps": ({"scheme": ("poisson", "allocation", "without_replacement", "banded_poisson", "matrix_poisson", "truncated_poisson", "with_replacement")}, None),
    "dataset_size": ({"scheme": ("without_replacement", "shuffled", "truncated_poisson", "with_replacement")}, None),
    "max_batch": ({"scheme": ("truncated_poisson",)}, None),
    "sample_size": ({"scheme": ("with_replacement",)}, None),
    "batch_size": ({"scheme": ("without_replacement", "shuffled")}, None),
    "drop_last": ({"scheme": ("shuffled",)}, False),
    "epochs": ({"scheme": ("allocation", "matrix", "shuffled")}, 1),
    "users": ({"scheme": ("shuffle", "checkin")}, None),
    "dimension": ({"scheme": ("shuffle",)}, None),
    "rounds": ({"scheme": ("checkin",)}, 1),
    "aggregation": ({"scheme": ("checkin",)}, "shuffle"),
    "batches": ({"scheme": ("matrix",)}, None),
    "groups": ({"scheme": ("banded_poisson", "matrix_poisson")}, None),
    **{
        name: ({"scheme": ("matrix", "banded_poisson", "matrix_poisson")}, None)
        for name in ("matrix", "matrix_file", "bands", "coefficients", "theta", "omega")
    },
}


def check_option_uses(args: argparse.Namespace) -> None:
    """Refuse a mechanism or scheme option that the chosen ``--mechanism`` and ``--scheme`` do not
    use: ``--steps 10`` without ``--scheme`` would otherwise be dropped silently and answer for one
    step, ``--sigma`` with ``--mechanism laplace`` would be ignored."""
    for name, (uses, default) in OPTION_USES.items():
        value = getattr(args, name, default)
        if value == default or any(getattr(args, selector, None) in choices for selector, choices in uses.items()):
            continue
        option = name.replace("_", "-")
        chosen = " ".join(f"--{selector} {getattr(args, selector, None)}" for selector in uses)
        applies = " or ".join(f"--{selector} {'/'.join(choices)}" for selector, choices in uses.items())
        raise InvalidArgument(option, value, f"--{option} does not apply to {chosen}", fix=f"it applies to {applies}")


def build_scheme(args: argparse.Namespace) -> Scheme:
    """The scheme the options describe (validated by the scheme's constructor); under
    ``--neighboring replace_one``, and for truncated Poisson (whose step pair only the claim layer
    builds), the model a claim with these fields gets (:func:`verifier.certify.claim.model_of`)."""
    check_option_uses(args)
    relation = getattr(args, "direction", None)
    if relation == "replace_one" or args.scheme == "truncated_poisson":
        from verifier.certify.claim import model_of

        return model_of(*model_json_from_flags(args), "replace_one" if relation == "replace_one" else "add_or_remove")
    pair = build_pair(args)
    if args.scheme == "single":
        return Single(pair)
    if args.scheme == "composed":
        return Composed(Single(pair), _required(args, "times", "composed", "--scheme"))
    if args.scheme == "poisson":
        return Poisson(pair, _required(args, "rate", "poisson", "--scheme"), _required(args, "steps", "poisson", "--scheme"))
    if args.scheme == "shuffle":
        from verifier.certify.claim import SCHEMES

        dimension = SCHEMES["shuffle"].fields["dimension"][0]("dimension", "any" if args.dimension is None else args.dimension)
        return Shuffle(pair, _required(args, "users", "shuffle", "--scheme"), dimension)
    if args.scheme == "checkin":
        users = _required(args, "users", "checkin", "--scheme")
        return CheckIn(pair, users, _required(args, "rate", "checkin", "--scheme"), args.rounds, args.aggregation)
    if args.scheme == "matrix":
        return _matrix_scheme(args, pair)
    if args.scheme == "banded_poisson":
        steps = check_integer("steps", _required(args, "steps", "banded_poisson", "--scheme"), minimum=1)
        return BandedPoisson(pair, _strategy(args, steps), _required(args, "groups", "banded_poisson", "--scheme"), _required(args, "rate", "banded_poisson", "--scheme"))
    if args.scheme == "matrix_poisson":
        steps = check_integer("steps", _required(args, "steps", "matrix_poisson", "--scheme"), minimum=1)
        return MatrixPoisson(pair, _strategy(args, steps), _required(args, "rate", "matrix_poisson", "--scheme"), 1 if args.groups is None else args.groups)
    if args.scheme == "without_replacement":
        return _fixed_batches(args, pair)
    if args.scheme in ("shuffled", "with_replacement"):
        raise InvalidArgument(
            "neighboring", args.direction, f"{args.scheme.replace('_', ' ')} batches are defined for replace-one neighbours only (n is public)",
            fix="give --neighboring replace_one",
        )
    return Allocation(pair, _required(args, "steps", "allocation", "--scheme"), 1 if args.k is None else args.k, args.epochs)


def scheme_notes(scheme: Scheme) -> list[str]:
    """What the user should know about how the scheme was modelled (e.g. |C| for a signed C)."""
    if isinstance(scheme, MatrixMechanism):
        notes = [f"strategy {scheme.strategy.label}, N = {scheme.strategy.size}, bandwidth {scheme.strategy.width}"]
        if scheme.strategy.signed:
            notes.append("C has negative entries: accounted through |C| (Schuchardt & Kalinin, Lemma 2.8)")
        return notes
    return []


def number_list(name: str, text: str | None) -> list[float] | None:
    if text is None:
        return None
    try:
        return [float(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise InvalidArgument(name, text, "must be comma-separated numbers", "e.g. --coefficients 1,0.5,0.375") from None


def _matrix_scheme(args: argparse.Namespace, pair: DominatingPair) -> MatrixMechanism:
    batches = check_integer("batches", _required(args, "batches", "matrix", "--scheme"), minimum=1)
    epochs = check_integer("epochs", args.epochs, minimum=1)
    return MatrixMechanism(pair, _strategy(args, batches * epochs), batches, epochs)


def _strategy(args: argparse.Namespace, size: int) -> Strategy:
    """The strategy C (N = ``size``) the --matrix/--matrix-file options describe (default: identity)."""
    from verifier.certify.claim import strategy_from_fields

    family = None if args.matrix_file is not None and args.matrix is None else (args.matrix or "identity")
    return strategy_from_fields(
        size,
        family,
        args.matrix_file,
        args.bands,
        number_list("coefficients", args.coefficients),
        number_list("theta", args.theta),
        number_list("omega", args.omega),
    )


def _fixed_batches(args: argparse.Namespace, pair: DominatingPair) -> WithoutReplacement:
    """Fixed-size batches under replace-one neighbours: records of norm <= Δ, so the batch step's
    pair has sensitivity 2Δ (as for a ``without_replacement`` claim)."""
    try:
        doubled = replace_one_pair(pair)
    except NotApplicable:
        raise InvalidArgument("mechanism", args.mechanism, "fixed-size batches are modelled for additive-noise mechanisms only (gaussian, laplace)") from None
    return WithoutReplacement(
        doubled,
        _required(args, "dataset_size", "without_replacement", "--scheme"),
        _required(args, "batch_size", "without_replacement", "--scheme"),
        _required(args, "steps", "without_replacement", "--scheme"),
    )


class _Refused(argparse.Action):
    """An option a command does not take but a user is likely to give it (``verifier epsilon
    --epsilon 1``): refused with status 2 and a line saying what to do instead, never read as
    another option (issue 41)."""

    def __init__(self, option_strings, dest, why: str = "", **kwargs) -> None:
        super().__init__(option_strings, dest, **kwargs)
        self.why = why

    def __call__(self, parser, namespace, values, option_string=None):
        raise InvalidArgument(str(option_string).lstrip("-"), values, self.why)


def refuse_option(parser: argparse.ArgumentParser, flag: str, why: str) -> None:
    """Make ``flag`` an option of ``parser`` that is refused with ``why`` (hidden from the help)."""
    parser.add_argument(flag, action=_Refused, why=why, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=argparse.SUPPRESS)


def add_budget_option(parser: argparse.ArgumentParser | argparse._ArgumentGroup, what: str = "", *, whole: bool = False) -> None:
    """``--time-budget SECONDS`` (every command that can run long: issue 41); ``what`` says what
    the budget stops on this command beyond the methods; ``whole`` for a command that has no
    partial answer and stops whole (:func:`whole_within_budget`)."""
    text = (
        "stop the command once this many seconds are spent: status 3, nothing partial printed (default: no limit)"
        if whole
        else "stop starting expensive methods after this many seconds and interrupt one still running; closed forms "
        f"always run, and what was cut is listed (default: no limit){what}"
    )
    parser.add_argument("--time-budget", type=float, metavar="SECONDS", help=text)


def budget_of(args: argparse.Namespace) -> float | None:
    """The validated ``--time-budget`` (None: no limit)."""
    from verifier._validation import check_nonnegative

    budget = getattr(args, "time_budget", None)
    return None if budget is None else check_nonnegative("time_budget", budget)


def budget_lines(skipped: Sequence[str]) -> list[str]:
    """One line per method the time budget stopped or never started (the partial result says so)."""
    from verifier.certify.portfolio import cut_by_budget

    cut = cut_by_budget(skipped)
    return [f"  not run: {entry}" for entry in skipped if entry.split(":")[0].split(" (")[0] in cut]


#: The status of a command whose --time-budget ran out before it had an answer (INCONCLUSIVE's).
EXIT_BUDGET_SPENT = 3


def whole_within_budget(handler: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """``handler`` run whole under ``--time-budget`` (for a command whose work has no partial
    answer: rdp, zcdp, mc, check-bound, audit, demo): interrupted when the budget is spent (the
    methods' own interrupt, :func:`verifier.certify.portfolio.call_within`), its output held back
    so that nothing partial is printed, and status 3 with one line on stderr saying so."""

    def run(args: argparse.Namespace) -> int:
        budget = budget_of(args)
        if budget is None:
            return handler(args)
        import contextlib
        import io
        import sys

        from verifier.certify.portfolio import call_within

        held = io.StringIO()
        with contextlib.redirect_stdout(held):
            status = call_within(budget, lambda: handler(args))
        if status is None:
            print(f"verifier: --time-budget of {budget:g} s spent before `{args.command}` finished; nothing partial was printed", file=sys.stderr)
            return EXIT_BUDGET_SPENT
        sys.stdout.write(held.getvalue())
        return status

    return run


def add_output_options(parser: argparse.ArgumentParser) -> None:
    add_direction_option(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")


def add_direction_option(parser: argparse.ArgumentParser, extra_help: str = "") -> None:
    """``--direction`` / ``--neighboring`` of the bounding commands (dest ``direction``, default both)."""
    parser.add_argument(
        "--direction",
        "--neighboring",
        dest="direction",
        choices=("add", "remove", "both", "add_or_remove", "replace_one"),
        default="both",
        help="neighbouring relation (the claim field 'neighboring'): one adjacency direction, 'both' = "
        "'add_or_remove' (default; the maximum of the two), or 'replace_one' (one record replaced by "
        "another, records of norm <= --sensitivity: modelled as a claim file's replace_one is)" + extra_help,
    )


def _required(args: argparse.Namespace, name: str, choice: str, option: str = "--mechanism") -> float:
    value = getattr(args, name)
    if value is None:
        raise InvalidArgument(name, None, f"--{name} is required for {option} {choice}")
    if isinstance(value, float) and math.isnan(value):
        raise InvalidArgument(name, value, "must be a real number, not NaN")
    return value


def build_pair(args: argparse.Namespace) -> DominatingPair:
    """The dominating pair the options describe (validated by the pair's constructor)."""
    if args.mechanism == "gaussian":
        return Gaussian(_required(args, "sigma", "gaussian"), args.sensitivity)
    if args.mechanism == "laplace":
        return Laplace(_required(args, "scale", "laplace"), args.sensitivity)
    if args.mechanism == "approx_dp":
        return ApproxDP(_required(args, "epsilon0", "approx_dp"), _required(args, "delta0", "approx_dp"))
    rr_outcomes = 2 if (args.k is None or getattr(args, "scheme", "single") == "allocation") else args.k
    return RandomizedResponse(_required(args, "epsilon0", "rr"), rr_outcomes)


def requested_directions(args: argparse.Namespace) -> tuple[Direction, ...]:
    """Both directions for replace-one neighbours (the relation is symmetric), else ``--direction``'s."""
    return directions_for("both" if args.direction == "replace_one" else args.direction)


def model_json_from_flags(args: argparse.Namespace) -> tuple[dict, dict]:
    """The claim-file objects ``mechanism`` and ``scheme`` the mechanism and scheme flags describe
    (not yet validated)."""
    from verifier.certify.claim import SCHEMES

    mechanism: dict = {"name": args.mechanism}
    fields = {"gaussian": ("sigma",), "laplace": ("scale",), "rr": ("epsilon0",), "approx_dp": ("epsilon0", "delta0")}[args.mechanism]
    for name in fields:
        if getattr(args, name) is not None:
            mechanism[name] = getattr(args, name)
    if args.mechanism in ("gaussian", "laplace"):
        mechanism["sensitivity"] = args.sensitivity
    elif args.k is not None and args.scheme != "allocation":
        mechanism["k"] = args.k
    scheme: dict = {"name": args.scheme}
    for name in SCHEMES[args.scheme].fields:
        if getattr(args, name) is not None:
            scheme[name] = getattr(args, name)
    if args.scheme in ("matrix", "banded_poisson", "matrix_poisson"):
        for name in ("coefficients", "theta", "omega"):
            if name in scheme:
                scheme[name] = number_list(name, scheme[name])
        if "matrix" not in scheme and "matrix_file" not in scheme:
            scheme["matrix"] = "identity"
    return mechanism, scheme


def emit(
    args: argparse.Namespace,
    *,
    quantity: str,
    at: float,
    lower: float | None,
    upper: float | None,
    bounds: Sequence[Bound],
    extra: dict | None = None,
) -> None:
    """Print a result as a short table or (``--json``) as one JSON object with the fields
    quantity, direction, at, lower, upper and bounds."""
    if args.json:
        payload = {
            "quantity": quantity,
            "direction": args.direction,
            "at": json_number(at),
            "lower": json_number(lower),
            "upper": json_number(upper),
            "bounds": [b.to_dict() for b in bounds],
        }
        payload.update(extra or {})
        print(json.dumps(payload))
        return
    argument = "ε" if quantity == "delta" else "δ"
    symbol = "δ" if quantity == "delta" else "ε"
    print(f"{symbol}({argument}={at:g}), direction {args.direction}: [{_fmt(lower, 'lower')}, {_fmt(upper, 'upper')}]")
    print(f"{'method':<28} {'direction':<9} {'side':<6} {'value':>24}")
    for b in bounds:
        print(f"{b.method:<28} {b.direction.value:<9} {b.side.value:<6} {_fmt(b.value, b.side.value):>24}")


def _fmt(x: float | None, side: str | None = None) -> str:
    return "unknown" if x is None else table_number(x, side, ".17g")
