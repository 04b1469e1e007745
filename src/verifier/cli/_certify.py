"""``verifier certify``: decide an (ε, δ) claim, given as a JSON file, a built-in example or flags.

Exit status: 0 CERTIFIED, 1 VIOLATED, 3 INCONCLUSIVE, 2 invalid claim (one line naming the field;
nothing is computed), 4 a defect in verifier (e.g. an internal inconsistency: a rigorous upper bound
below a rigorous lower bound, both named). ``--json`` prints the certificate (schema: certify/certificate.schema.json).
"""

from __future__ import annotations

import argparse
import json
import math

from verifier._files import write_text_atomically
from verifier.certify.certificate import NO_LOWER_BOUND, to_certificate
from verifier.adapters import from_dp_event
from verifier.certify.claim import read_json, NEIGHBORING, Claim, load_claim, parse_claim
from verifier.certify.examples import DEMO, EXAMPLES, example
from verifier.certify.verdict import Outcome, certify
from verifier.cli._options import add_budget_option, add_mechanism_options, add_scheme_options, budget_of, check_option_uses, model_json_from_flags
from verifier.cli._report import add_report_option, write_report_if_asked
from verifier.errors import InvalidArgument
from verifier.cli import SUMMARIES

__all__ = ["register", "add_neighboring_option", "claim_from_flags", "claim_json_from_flags", "describe_part", "describe_model", "summary_lines"]

#: Flags that describe a claim; giving one together with a claim file or --example is an error.
_CLAIM_FLAGS = ("sigma", "scale", "epsilon0", "times", "rate", "steps", "neighboring", "epsilon", "delta")
_CLAIM_FLAGS += ("dataset_size", "batch_size")
_CLAIM_FLAGS += ("fpr", "claim_tpr")
_CLAIM_FLAGS += ("delta0", "claim_rho", "batches", "matrix", "matrix_file", "bands", "coefficients", "theta", "omega")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "certify",
        help=SUMMARIES["certify"],
        description="Decide an (ε, δ) claim from rigorous bounds. The claim is a JSON file, a built-in "
        "example (--example) or the flags below. Exit status: 0 CERTIFIED, 1 VIOLATED, 3 INCONCLUSIVE, "
        "2 invalid input, 4 a defect in verifier (e.g. a rigorous upper bound below a rigorous lower bound).",
    )
    parser.add_argument("claim", nargs="?", help="claim JSON file with the fields mechanism, scheme, neighboring, epsilon, delta (see verifier.certify.claim)")
    parser.add_argument("--dp-event", dest="dp_event", metavar="EVENT.json", help="a dp_accounting DpEvent in JSON (its to_named_tuple() as an object) instead of a claim file; with --epsilon, --delta and optionally --neighboring")
    parser.add_argument("--example", choices=[e.name for e in EXAMPLES + DEMO], help="certify a built-in example claim")
    add_mechanism_options(parser)
    add_scheme_options(parser)
    add_neighboring_option(parser)
    parser.add_argument("--epsilon", type=float, help="claimed ε")
    parser.add_argument("--delta", type=float, help="claimed δ in [0, 1) (0: a pure-DP claim, decided on the largest privacy loss)")
    parser.add_argument("--claim-rho", type=float, metavar="RHO", help="a zCDP claim instead of (ε, δ): the scheme is ρ-zCDP, ρ > 0")
    parser.add_argument("--fpr", type=float, metavar="ALPHA", help="with --claim-tpr: the false-positive rate α in [0, 1] of a trade-off claim")
    parser.add_argument(
        "--claim-tpr", type=float, metavar="TAU",
        help="a trade-off claim instead of (ε, δ): a membership attacker at FPR --fpr has TPR at most τ in [0, 1]",
    )
    _add_run_options(parser)
    parser.set_defaults(handler=_run)


def _neighboring(text: str) -> str:
    """A claim's relation; ``both`` is ``add_or_remove``, as in the bounding commands' ``--neighboring``."""
    return "add_or_remove" if text == "both" else text


def add_neighboring_option(parser: argparse.ArgumentParser) -> None:
    """``--neighboring`` of the commands that decide claims (certify, calibrate, sweep): the claim
    field's values, and ``both`` (= add_or_remove) as ``delta``/``epsilon``/``bounds``/``mc``/``rdp`` take it."""
    parser.add_argument(
        "--neighboring",
        type=_neighboring,
        choices=NEIGHBORING,
        metavar="{" + ",".join((*NEIGHBORING, "both")) + "}",
        help="neighbouring relation (default: add_or_remove; 'both' is the same: the maximum over add and remove)",
    )


def _add_run_options(parser: argparse.ArgumentParser) -> None:
    """--time-budget, --json and --output."""
    add_budget_option(parser)
    parser.add_argument("--json", action="store_true", help="print the JSON certificate")
    add_report_option(parser)
    parser.add_argument(
        "--output",
        metavar="FILE",
        help="also write the JSON certificate to FILE, whole or not at all (temporary file + rename)",
    )


def claim_from_flags(args: argparse.Namespace) -> Claim:
    """The claim the mechanism/scheme/claim flags describe, validated like a claim file."""
    return parse_claim(claim_json_from_flags(args))


def claim_json_from_flags(args: argparse.Namespace) -> dict:
    """The claim the mechanism/scheme/claim flags describe, as JSON (not yet validated)."""
    check_option_uses(args)
    mechanism, scheme = model_json_from_flags(args)
    claim: dict = {"mechanism": mechanism, "scheme": scheme}
    for name in ("neighboring", "epsilon", "delta"):
        if getattr(args, name) is not None:
            claim[name] = getattr(args, name)
    if getattr(args, "claim_rho", None) is not None:
        claim["rho"] = args.claim_rho
    if getattr(args, "claim_tpr", None) is not None or getattr(args, "fpr", None) is not None:
        claim["tpr"], claim["fpr"] = getattr(args, "claim_tpr", None), getattr(args, "fpr", None)
        claim = {key: value for key, value in claim.items() if value is not None}
    return claim


def _claim(args: argparse.Namespace) -> Claim:
    given = [flag for flag in _CLAIM_FLAGS if getattr(args, flag) is not None]
    if args.claim is not None and args.example is not None:
        raise InvalidArgument("example", args.example, "give either a claim file or --example, not both")
    source = args.claim if args.claim is not None else args.example
    if source is not None and given:
        raise InvalidArgument(given[0], getattr(args, given[0]), "claim flags cannot be combined with a claim file or --example")
    if args.dp_event is not None:
        return _dp_event_claim(args, given, source)
    if args.claim is not None:
        return load_claim(args.claim)
    if args.example is not None:
        return example(args.example).parsed()
    return claim_from_flags(args)


def _dp_event_claim(args: argparse.Namespace, given: list[str], source: str | None) -> Claim:
    """The claim about a dp_accounting DpEvent (JSON form) with --epsilon, --delta, --neighboring."""
    if source is not None:
        raise InvalidArgument("dp_event", args.dp_event, "give either --dp-event or a claim file/--example, not both")
    extra = [flag for flag in given if flag not in ("epsilon", "delta", "neighboring")]
    if extra:
        raise InvalidArgument(extra[0], getattr(args, extra[0]), "the DpEvent describes the mechanism and scheme; give only --epsilon, --delta, --neighboring")
    for flag in ("epsilon", "delta"):
        if getattr(args, flag) is None:
            raise InvalidArgument(flag, None, "is required with --dp-event")
    event = read_json("dp_event", args.dp_event)
    return from_dp_event(event, epsilon=args.epsilon, delta=args.delta, neighboring=args.neighboring or "add_or_remove")


def summary_lines(outcome: Outcome) -> list[str]:
    """A short human-readable account of an outcome: verdict, claim, deciding bounds, ε brackets."""
    claim = outcome.claim
    stated = _stated(claim)
    lines = [
        f"{outcome.verdict.value}: {describe_model(claim.mechanism, claim.scheme, claim.neighboring)}: claimed {stated}"
    ]
    if claim.neighboring == "replace_one" or "|C|" in claim.modelling:
        lines.append(f"  model: {claim.modelling}")
    lines += [f"  {reason}" for reason in outcome.decision.reasons]
    if outcome.epsilon is not None:
        brackets = "  ".join(_bracket_text(d.value, b) for d, b in outcome.epsilon.brackets.items())
        lines.append(f"  ε(δ={claim.delta!r}): {brackets}")
    if outcome.delta is not None:
        lines += [
            f"  estimate (not a bound): {e.direction.value} δ(ε) ≈ {e.value:.6g}, {e.confidence:.0%} interval "
            f"[{e.lower:.6g}, {e.upper:.6g}] from {e.samples} samples ({e.method}{', ' + e.note if e.note else ''})"
            for e in outcome.delta.estimates
        ]
        lines.append(f"  methods run: {', '.join(outcome.delta.ran)} ({outcome.seconds:.3g} s)")
        lines += [f"  not run: {s}" for s in outcome.delta.skipped]
    if outcome.rho is not None:
        lines.append("  ρ: " + "  ".join(f"{d.value} [{b.lower!r}, {b.upper!r}]" for d, b in outcome.rho.brackets.items()))
        lines.append(f"  methods run: {', '.join(outcome.rho.ran)} ({outcome.seconds:.3g} s)")
    if outcome.tpr is not None:
        lines.append(f"  TPR(FPR={claim.fpr!r}): " + "  ".join(f"{d.value} [{b.lower!r}, {b.upper!r}]" for d, b in outcome.tpr.brackets.items()))
        lines.append(f"  methods run: {', '.join(outcome.tpr.ran)} ({outcome.seconds:.3g} s)")
    return lines


def _stated(claim: Claim) -> str:
    """The claim's statement: (ε, δ), ρ (zCDP) or TPR at FPR (trade-off)."""
    if claim.rho is not None:
        return f"ρ={claim.rho!r} (zCDP)"
    if claim.tpr is not None:
        return f"TPR <= {claim.tpr!r} at FPR {claim.fpr!r} (trade-off)"
    return f"(ε={claim.epsilon!r}, δ={claim.delta!r})"


def _bracket_text(direction: str, bracket) -> str:
    """``add [lower, upper]``, or ``add <= upper (no lower bound computed …)`` when no method gave a
    lower bound (never a bracket that starts at -inf)."""
    if bracket.lower == -math.inf:
        return f"{direction} <= {bracket.upper!r} ({NO_LOWER_BOUND})"
    return f"{direction} [{bracket.lower!r}, {bracket.upper!r}]"


def describe_part(obj: dict | None) -> str:
    """``gaussian(sigma=1, sensitivity=1)`` from a normalised claim object; ``single`` when bare;
    nested objects (a phase's mechanism) and lists (a sequence's phases) are described in place;
    an absent mechanism (each phase of a sequence states its own) is the empty string."""
    if obj is None:
        return ""
    params = ", ".join(f"{k}={_value(v)}" for k, v in obj.items() if k != "name")
    return f"{obj['name']}({params})" if params else obj["name"]


def describe_model(mechanism: dict | None, scheme: dict, neighboring: str) -> str:
    """``gaussian(sigma=1, sensitivity=1) poisson(rate=0.01, steps=1000), add_or_remove``: a human-readable
    label of a claim's model (titles of tables and plots; not Python reprs: issue 32)."""
    return f"{' '.join(filter(None, (describe_part(mechanism), describe_part(scheme))))}, {neighboring}"


def _value(value) -> str:
    if isinstance(value, dict):
        return describe_part(value)
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, str):  # a choice, e.g. a check-in's aggregation
        return value
    if isinstance(value, bool):  # a flag, e.g. shuffled batches' drop_last
        return "true" if value else "false"
    if isinstance(value, int):  # a count: n = 10000050 must not print as 1e+07
        return str(value)
    return f"{value:g}"


def _run(args: argparse.Namespace) -> int:
    claim = _claim(args)
    outcome = certify(claim, only=args.method, time_budget=budget_of(args))
    certificate = to_certificate(outcome) if (args.json or args.output) else None
    if args.output:
        write_text_atomically(args.output, json.dumps(certificate, indent=1) + "\n", "output")
    if args.json:
        print(json.dumps(certificate))
    else:
        print("\n".join(summary_lines(outcome)))
    write_report_if_asked(args, outcome)
    return outcome.verdict.exit_status
