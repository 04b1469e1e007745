"""``verifier sweep``: rigorous ε(δ) brackets (and verdicts) over a grid of parameters, on dask.

Each finished point is written at once to an SQLite store keyed by the point's canonical
parameters, so an interrupted sweep (Ctrl-C: exit status 130) resumes where it stopped when the
same command is run again. Output: a table, optionally CSV/Parquet files, a plot and an HTML report.
Exit status: 0 done, 2 invalid input, 130 interrupted.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

from verifier._files import atomic_output
from verifier.certify.sweep import GRID_FIELDS, ResultStore, flat_rows, grid_points, run_sweep
from verifier.cli._certify import add_neighboring_option, claim_json_from_flags
from verifier.cli._options import add_budget_option, add_mechanism_options, add_scheme_options, budget_of
from verifier.errors import InvalidArgument
from verifier.cli import SUMMARIES

__all__ = ["register", "parse_grid"]

EXIT_INTERRUPTED = 130

#: Swept names whose values are integers.
_INTEGER = ("steps", "epochs", "times", "k")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "sweep",
        help=SUMMARIES["sweep"],
        description="Rigorous ε(δ) brackets (and verdicts, with --epsilon) for every point of a grid, evaluated "
        "one after another (or in parallel on dask with --workers > 1) and stored as each finishes, so an interrupted sweep resumes. Fixed parameters "
        "come from the usual flags, swept ones from --grid NAME=V1,V2,...",
    )
    add_mechanism_options(parser)
    add_scheme_options(parser)
    add_neighboring_option(parser)
    parser.add_argument("--epsilon", type=float, help="claimed ε (optional: each point then also gets a verdict)")
    parser.add_argument("--delta", type=float, help="δ at which ε is bounded (or sweep it with --grid delta=...)")
    parser.add_argument(
        "--grid",
        action="append",
        required=True,
        metavar="NAME=V1,V2,...",
        help=f"a swept parameter and its values (repeatable; NAME one of {', '.join(GRID_FIELDS)})",
    )
    run = parser.add_argument_group("where and how")
    run.add_argument("--store", default="verifier-sweep.sqlite", help="SQLite results store (default verifier-sweep.sqlite); finished points are never recomputed")
    run.add_argument(
        "--workers", type=int, default=1,
        help="points evaluated at once (default 1: one after another in this process, no dask needed); more than 1 runs a local dask cluster (pip install 'verifier[dask]')",
    )
    run.add_argument("--scheduler", metavar="ADDRESS", help="use an existing dask cluster (e.g. tcp://host:8786) instead of a local one")
    run.add_argument("--in-process", action="store_true", help="evaluate in this process, without dask (as --workers 1)")
    add_budget_option(run, "; shared by the whole sweep: a point it cuts is not stored, so running the command again finishes it")
    out = parser.add_argument_group("output")
    out.add_argument("--csv", metavar="FILE.csv", help="write the table as CSV")
    out.add_argument("--parquet", metavar="FILE.parquet", help="write the table as Parquet (needs pyarrow)")
    out.add_argument("--plot", metavar="FILE.png", help="plot ε(δ) against the --x parameter, one line per method, certified band shaded")
    out.add_argument("--x", help="the swept parameter on the plot's x axis (default: the first --grid)")
    out.add_argument("--report", metavar="FILE.html", help="write a self-contained HTML page with the table and the plot")
    out.add_argument("--json", action="store_true", help="print the table as one JSON object")
    parser.set_defaults(handler=_run)


def parse_grid(items: list[str]) -> dict[str, list[float | int]]:
    """``["sigma=0.8,1", "steps=100,1000"]`` -> ``{"sigma": [0.8, 1.0], "steps": [100, 1000]}``."""
    grid: dict[str, list[float | int]] = {}
    for item in items:
        name, sep, values = item.partition("=")
        name = name.strip()
        if not sep or name not in GRID_FIELDS:
            raise InvalidArgument("grid", item, f"must be NAME=V1,V2,... with NAME one of {', '.join(GRID_FIELDS)}")
        if name in grid:
            raise InvalidArgument("grid", item, f"sweeps {name} twice")
        convert = int if name in _INTEGER else float
        try:
            grid[name] = [convert(v) for v in values.split(",") if v.strip()]
        except ValueError:
            raise InvalidArgument(f"grid.{name}", values, f"must be a comma-separated list of {'integers' if convert is int else 'numbers'}") from None
        if not grid[name]:
            raise InvalidArgument(f"grid.{name}", values, "must list at least one value")
    return grid


def _points(args: argparse.Namespace, grid: dict) -> list[dict]:
    fixed = {name for name in grid if getattr(args, name, None) is not None and name not in ("epochs", "sensitivity")}
    if fixed:
        name = sorted(fixed)[0]
        raise InvalidArgument(name, getattr(args, name), "is both swept (--grid) and fixed (a flag); give one")
    base = claim_json_from_flags(args)
    if "delta" not in base and "delta" not in grid:
        raise InvalidArgument("delta", None, "is required: give --delta or --grid delta=...")
    for name in grid:  # a swept value replaces a flag's default (e.g. --epochs 1)
        where = GRID_FIELDS[name]
        if where != "claim":
            base[where].pop(name, None)
    return grid_points(base, grid)


def _progress():
    """A rich progress bar on stderr (points done, elapsed, time left); a no-op context when
    stderr is not a terminal."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    console = Console(stderr=True)
    return Progress(
        TextColumn("sweep"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), TextColumn("left"), TimeRemainingColumn(),
        console=console, disable=not console.is_terminal,
    )


def _run(args: argparse.Namespace) -> int:
    grid = parse_grid(args.grid)
    points = _points(args, grid)
    names = list(grid)
    x = args.x or names[0]
    if x not in names:
        raise InvalidArgument("x", x, f"must be one of the swept parameters: {', '.join(names)}")
    store = ResultStore(args.store)
    workers = None if args.in_process else args.workers
    try:
        with _progress() as bar:
            task = bar.add_task("points", total=len(points))
            swept = run_sweep(
                points, store, only=args.method, workers=workers, scheduler=args.scheduler,
                progress=lambda done, total: bar.update(task, completed=done, total=total), time_budget=budget_of(args),
            )
    except KeyboardInterrupt:
        finished = len(store.keys())
        store.close()
        print(f"verifier: interrupted; {finished} finished points are in {args.store}: run the same command again to resume", file=sys.stderr)
        return EXIT_INTERRUPTED
    header, rows = flat_rows(store, swept.keys, names)
    store.close()
    _outputs(args, header, rows, names, x)
    if args.json:
        print(json.dumps({"columns": header, "rows": rows, "computed": swept.computed, "already_stored": swept.already_stored, "cut_by_time_budget": swept.cut}))
        return 0
    print(f"{len(rows)} points ({swept.computed} computed now, {swept.already_stored} from {args.store}); ε bounds at the claimed δ")
    if swept.cut:
        print(f"{swept.cut} points not finished within --time-budget (not stored): run the same command again to compute them")
    shown = [c for c in header if ":" not in c]
    print("  ".join(f"{c:>14}" for c in shown))
    for row in rows:
        print("  ".join(f"{_fmt(v):>14}" for c, v in zip(header, row) if c in shown))
    return 0


def _fmt(value) -> str:
    if isinstance(value, float):
        return f"{value:.8g}"
    return "—" if value is None else str(value)


def _outputs(args: argparse.Namespace, header: list[str], rows: list[list], names: list[str], x: str) -> None:
    if args.csv:
        with atomic_output(args.csv, "csv") as handle:  # whole or not at all
            writer = csv.writer(handle, lineterminator="\n")
            writer.writerow(header)
            writer.writerows(rows)
    if args.parquet:
        _parquet(args.parquet, header, rows)
    title = ", ".join(f"{n} ∈ {{{', '.join(f'{v:g}' for v in sorted({r[header.index(n)] for r in rows}))}}}" for n in names)
    if args.plot:
        from verifier.report.sweep import plot_sweep

        from verifier._types import directions_for

        relation = "add_or_remove" if args.neighboring in (None, "replace_one") else args.neighboring
        plot_sweep(header, rows, names, x, Path(args.plot), title=title, directions=[d.value for d in directions_for(relation)])
    if args.report:
        from verifier.report.html import write_html
        from verifier.report.sweep import render_sweep_report

        write_html(args.report, render_sweep_report(header, rows, names, x, title=title, store=args.store))


def _parquet(path: str, header: list[str], rows: list[list]) -> None:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise InvalidArgument("parquet", path, "needs pyarrow", fix="pip install pyarrow, or use --csv") from None
    columns = {}
    for index, name in enumerate(header):
        values = [row[index] for row in rows]
        # numbers are stored as JSON, ±∞ as "inf"/"-inf": back to floats (the verdict stays text)
        columns[name] = values if name == "verdict" else [None if v is None else float(v) for v in values]
    try:
        pq.write_table(pa.table(columns), path)
    except OSError as exc:
        raise InvalidArgument("parquet", path, f"cannot be written ({exc})") from None
