"""``verifier mc``: Monte Carlo estimates of δ(ε) with confidence intervals (never bounds).

Runs in-process, or on dask (``--scheduler ADDRESS`` or ``--workers N`` for a local cluster);
``--results FILE`` appends each finished chunk so an interrupted run resumes. With one ε, ``--json``
prints ``estimate``, ``lower``, ``upper`` (the confidence bounds on δ), ``confidence`` and
``samples`` at the top level (for ``--direction both``: of max(δ_add, δ_remove), each direction being
run at confidence 1 − (1 − c)/2 so the maximum's interval holds at c), and ``estimates`` with one
object per (direction, ε). Replace-one subsampling (fixed-size batches, Poisson under
``--neighboring replace_one``) is drawn through its attained pair of neighbours, as the certifier's
Monte Carlo method draws it; where that pair is not proven to be the worst case, the estimates say
so (their ``note``; a line above the table).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace

from verifier._types import Estimate
from verifier._validation import check_open_unit
from verifier.cli._options import add_mechanism_options, add_output_options, add_scheme_options, build_scheme, requested_directions
from verifier.montecarlo import DEFAULT_CHUNK_SIZE, IMPORTANCE, INTERVALS, estimate_delta
from verifier.cli import SUMMARIES
from verifier.cli._options import add_budget_option, whole_within_budget

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "mc",
        help=SUMMARIES["mc"],
        description="Monte Carlo estimates of δ(ε) = E[(1 − e^{ε−L})_+] with KL–Chernoff / empirical-"
        "Bernstein confidence intervals, in-process or on dask, resumable from a results file.",
    )
    add_mechanism_options(parser)
    add_scheme_options(parser, method=False)
    run = parser.add_argument_group("Monte Carlo run")
    run.add_argument("--epsilon", type=float, action="append", required=True, help="ε (repeatable: all from the same samples)")
    run.add_argument("--samples", type=int, default=100_000, help="privacy-loss samples per direction (default 100000)")
    run.add_argument("--seed", type=int, default=0, help="seed (>= 0) of numpy's SeedSequence (default 0)")
    run.add_argument("--confidence", type=float, default=0.99, help="joint level of each interval, in (0, 1) (default 0.99)")
    run.add_argument("--interval", choices=INTERVALS, default="kl", help="confidence bound (default kl: KL–Chernoff)")
    run.add_argument("--importance", choices=IMPORTANCE, default="auto", help="Chua et al. importance sampling (Gaussian allocation, k=1)")
    run.add_argument(
        "--order-statistics",
        action="store_true",
        help="Gaussian allocation: pessimistic order-statistics loss (O(R) per sample; estimates an UPPER bound on δ)",
    )
    run.add_argument("--chunk-size", type=int, default=DEFAULT_CHUNK_SIZE, help=f"samples per chunk (default {DEFAULT_CHUNK_SIZE})")
    run.add_argument("--results", metavar="FILE", help="JSON-lines file receiving finished chunks; a rerun resumes from it")
    run.add_argument("--scheduler", metavar="ADDRESS", help="run the chunks on this dask scheduler")
    run.add_argument("--workers", type=int, help="run the chunks on a local dask cluster of N worker processes")
    run.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None, help="progress bar on stderr (default: when stderr is a terminal)")
    add_output_options(parser)
    add_budget_option(parser, whole=True)
    parser.set_defaults(handler=whole_within_budget(_run))


def _combined(estimates: list[Estimate], confidence: float) -> dict:
    """Top-level fields: the estimate of max over directions (one ε)."""
    return {
        "estimate": max(e.value for e in estimates),
        "lower": max(e.lower for e in estimates),
        "upper": max(e.upper for e in estimates),
        "confidence": confidence,
        "samples": min(e.samples for e in estimates),
        "epsilon": estimates[0].at,
        "method": estimates[0].method,
    }


def _run(args: argparse.Namespace) -> int:
    confidence = check_open_unit("confidence", args.confidence)
    directions = requested_directions(args)
    per_direction = 1.0 - (1.0 - confidence) / len(directions)
    from verifier.certify.methods.montecarlo import ATTAINED_PAIR_NOTE, simulated

    drawn, worst_case = simulated(build_scheme(args))
    result = estimate_delta(
        drawn,
        args.epsilon,
        directions,
        args.samples,
        seed=args.seed,
        confidence=per_direction,
        interval=args.interval,
        chunk_size=args.chunk_size,
        importance=args.importance,
        order_statistics=args.order_statistics,
        results=args.results,
        scheduler=args.scheduler,
        workers=args.workers,
        progress=sys.stderr.isatty() if args.progress is None else args.progress,
    )
    note = "" if worst_case else ATTAINED_PAIR_NOTE
    estimates = [replace(e, note=note) for d in directions for e in result.estimates[d]]
    if args.json:
        payload: dict = {"direction": args.direction}
        if len(args.epsilon) == 1:
            payload.update(_combined(estimates, confidence))
        payload.update(
            estimates=[e.to_dict() for e in estimates],
            chunks_run=result.chunks_run,
            chunks_resumed=result.chunks_resumed,
            seed=args.seed,
            chunk_size=args.chunk_size,
        )
        print(json.dumps(payload))
        return 0
    print(f"Monte Carlo estimates of δ(ε) (estimates, not bounds), {result.chunks_run} chunks run, {result.chunks_resumed} resumed")
    if note:
        print(f"estimates {note}")
    print(f"{'direction':<9} {'ε':>10} {'estimate':>14} {'lower':>14} {'upper':>14} {'confidence':>10} {'samples':>10}")
    for e in estimates:
        print(f"{e.direction.value:<9} {e.at:>10.6g} {e.value:>14.6g} {e.lower:>14.6g} {e.upper:>14.6g} {e.confidence:>10.6g} {e.samples:>10d}")
    return 0
