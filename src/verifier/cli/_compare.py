"""``verifier compare``: ε(δ) against σ for every method, for Gaussian k-out-of-t random allocation
(the figure style of Feldman & Shenfeld 2025, Fig. 2) or a matrix mechanism (``--matrix``; read
across, the curves are Schuchardt & Kalinin's calibrated σ against ε): upper bounds solid, lower bounds dashed,
Poisson subsampling at rate k/t (PLD) for comparison, as a PNG and a table.

Per method the curve is the maximum over the two directions of its per-direction bound (a method
that bounds one direction only is labelled so: an upper bound for one direction is not one for
add-or-remove, a lower bound is). "combined (analytic + RDP)" is the paper's combined bound: the
best of the non-PLD upper bounds per direction, then the maximum over directions.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from dataclasses import dataclass

import numpy as np

from verifier._types import Bound, Direction, Quantity, Side, json_number
from verifier._validation import check_integer, check_nonnegative, check_open_unit, check_positive
from verifier.certify.portfolio import call_within, collect_bounds, cut_by_budget
from verifier.analytic import pld_poisson_profile
from verifier.errors import InvalidArgument, NotApplicable
from verifier.cli._options import add_method_option
from verifier.cli._table import numbered_table, table_number, wrapped
from verifier.pairs import Gaussian
from verifier.report.plots import legend_outside, pyplot, save_figure
from verifier.schemes import Allocation
from verifier.cli import SUMMARIES

__all__ = ["register", "Series", "compare_series"]

BOTH = (Direction.ADD, Direction.REMOVE)
#: The PLD method for the Poisson comparison; the paper's "combined" curve takes every upper bound
#: except those of PLD methods (any method whose name contains "pld").
PLD_METHOD = "pld"
MAX_POINTS = 200


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "compare",
        help=SUMMARIES["compare"],
        description="Upper and lower bounds on ε(δ) of Gaussian k-out-of-t random allocation against σ, "
        "one curve per method, with Poisson subsampling at rate k/t for comparison.",
    )
    parser.add_argument("--sigma-min", type=float, required=True, help="smallest noise σ > 0")
    parser.add_argument("--sigma-max", type=float, required=True, help="largest noise σ")
    parser.add_argument("--points", type=int, default=12, help=f"σ values, geometrically spaced, 2..{MAX_POINTS} (default 12)")
    parser.add_argument("--steps", type=int, help="allocation: number of steps t >= 1")
    parser.add_argument("--k", type=int, default=1, help="steps per element (default 1)")
    parser.add_argument("--epochs", type=int, default=1, help="epochs (default 1)")
    parser.add_argument("--delta", type=float, required=True, help="δ in (0, 1) at which ε is bounded")
    add_method_option(parser)
    parser.add_argument("--matrix", help="compare a matrix mechanism instead (identity, bsr, toeplitz, blt; with --batches, --epochs)")
    parser.add_argument("--matrix-file", dest="matrix_file", help="matrix mechanism with C from a .npy/.csv file")
    parser.add_argument("--bands", type=int, help="matrix bsr: number of bands p")
    parser.add_argument("--batches", type=int, help="matrix: batches per epoch b")
    parser.add_argument("--out", metavar="FILE.png", help="write the figure here")
    parser.add_argument(
        "--time-budget",
        type=float,
        metavar="SECONDS",
        help="per σ: stop the methods (and the Poisson curve) after this many seconds; a method cut short leaves no point, "
        "marked 'cut' in the table and named in the figure's legend (default: no limit)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    parser.set_defaults(handler=_run)


@dataclass(frozen=True)
class Series:
    """One curve: ε against σ for one method and side (NaN where the method gave nothing); ``cut``
    marks the σ where it gave nothing because ``--time-budget`` stopped it (or never started it)."""

    label: str
    side: Side
    values: tuple[float, ...]
    cut: tuple[bool, ...] = ()

    def cell(self, index: int) -> str:
        """The table cell at σ number ``index``: the value, "cut" (by the time budget) or "—" (no bound)."""
        value = self.values[index]
        if math.isnan(value):
            return "cut" if self.cut and self.cut[index] else "—"
        return table_number(value, self.side.value)

    @property
    def cut_sigmas(self) -> list[int]:
        return [i for i, c in enumerate(self.cut) if c and math.isnan(self.values[i])]


def _best(bounds: list[Bound], side: Side) -> float:
    values = [b.value for b in bounds]
    return min(values) if side is Side.UPPER else max(values)


def _per_method(bounds: tuple[Bound, ...]) -> dict[tuple[str, Side], float]:
    """(label, side) -> ε: max over directions of each method's best bound per direction."""
    groups: dict[tuple[str, Side], dict[Direction, list[Bound]]] = {}
    for b in bounds:
        groups.setdefault((b.method, b.side), {}).setdefault(b.direction, []).append(b)
    out: dict[tuple[str, Side], float] = {}
    for (method, side), by_direction in groups.items():
        per = {d: _best(bs, side) for d, bs in by_direction.items()}
        label = method if len(per) == 2 else f"{method} ({next(iter(per)).value} only)"
        out[(label, side)] = max(per.values())
    combined = {}
    for b in bounds:
        if b.side is Side.UPPER and PLD_METHOD not in b.method:
            combined[b.direction] = min(combined.get(b.direction, math.inf), b.value)
    if len(combined) == 2:
        out[("combined (analytic + RDP)", Side.UPPER)] = max(combined.values())
    return out


#: The label of the Poisson comparison curve.
POISSON_LABEL = "Poisson rate k/t (PLD)"


def _poisson(sigma: float, steps: int, k: int, epochs: int, delta: float, time_budget: float | None = None) -> float | None:
    """ε(δ) upper bound of Poisson subsampling at rate k/t over t·E steps, both directions, from
    the PLD engine's DOMINATING side (the profile the decomposition bound also uses, so cached);
    NaN where it does not apply, None when ``time_budget`` ran out first (the curve obeys the
    budget like the methods: issue 32, σ = 0.5 took 34 s under --time-budget 2)."""

    def compute() -> float:
        try:
            return max(pld_poisson_profile(Gaussian(sigma), k / steps, steps * epochs, d).epsilon_upper(delta) for d in BOTH)
        except NotApplicable:
            return math.nan

    return call_within(time_budget, compute)


def compare_series(
    sigmas, steps: int, k: int, epochs: int, delta: float, only=None, progress=None, make_scheme=None, time_budget: float | None = None
) -> list[Series]:
    """Every method's ε(δ) curve over ``sigmas`` for Allocation(Gaussian(σ), steps, k, epochs),
    plus "Poisson k/t (PLD)"; or, with ``make_scheme`` (σ → scheme, e.g. a matrix mechanism), every
    method's curve for that scheme without the Poisson comparison."""
    columns: dict[tuple[str, Side], list[float]] = {}
    cut: dict[str, set[int]] = {}  # method -> the σ indices where the time budget stopped it
    poisson: list[float] = []
    for index, sigma in enumerate(sigmas):
        started = time.perf_counter()
        if make_scheme is None:
            scheme = Allocation(Gaussian(float(sigma)), steps, k, epochs)
        else:
            scheme = make_scheme(float(sigma))
        collected = collect_bounds(scheme, Quantity.EPSILON, delta, BOTH, only=only, time_budget=time_budget)
        for key, value in _per_method(collected.bounds).items():
            columns.setdefault(key, [math.nan] * len(sigmas))[index] = value
        for name in cut_by_budget(collected.skipped):
            cut.setdefault(name, set()).add(index)
            for side in _sides(name):  # a column even for a method the budget never let give a bound
                columns.setdefault((name, side), [math.nan] * len(sigmas))
        if make_scheme is None:
            value = _poisson(float(sigma), steps, k, epochs, delta, time_budget)
            if value is None:
                cut.setdefault(_base(POISSON_LABEL), set()).add(index)
            poisson.append(math.nan if value is None else value)
        if progress is not None:
            seconds: dict[str, float] = {}
            for b in collected.bounds:
                seconds[b.method] = seconds.get(b.method, 0.0) + b.seconds
            detail = ", ".join(f"{m} {t:.1f}" for m, t in sorted(seconds.items()))
            progress(f"σ = {sigma:.4g}: {time.perf_counter() - started:.1f} s ({detail})")
    def marks(label: str) -> tuple[bool, ...]:
        where = cut.get(_base(label), set())
        return tuple(i in where for i in range(len(sigmas)))

    ordered = sorted(columns.items(), key=lambda kv: (kv[0][1].value, kv[0][0]))
    series = [Series(label, side, tuple(v), marks(label)) for (label, side), v in ordered]
    if make_scheme is None:
        series.append(Series(POISSON_LABEL, Side.UPPER, tuple(poisson), marks(POISSON_LABEL)))
    return series


def _base(label: str) -> str:
    """A series' method: its label without a parenthesis ("rdp (add only)" -> "rdp")."""
    return label.split(" (")[0]


def _sides(name: str) -> tuple[Side, ...]:
    """The sides a registered method gives bounds on (none for an estimate-only method)."""
    from verifier.certify.method import Guarantee
    from verifier.certify.registry import all_methods

    returns = next((m.returns for m in all_methods() if m.name == name), frozenset())
    return tuple(side for side, guarantee in ((Side.UPPER, Guarantee.UPPER), (Side.LOWER, Guarantee.LOWER)) if guarantee in returns)


def _one_direction_upper(s: Series) -> bool:
    """An upper bound on one direction only ("rdp (add only)"): not a bound on ε of add-or-remove,
    the maximum over both (Feldman & Shenfeld, Def 2.2). A one-direction LOWER bound is a lower
    bound on that maximum too."""
    return s.side is Side.UPPER and s.label.endswith(" only)")


def _plot(sigmas, series: list[Series], path: str, title: str) -> None:
    """ε against σ, every series labelled with its side and directions; a one-direction upper bound
    is not drawn (it would read as the answer, issue 41) but named under the title."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 5.5), dpi=130)
    colours = plt.get_cmap("tab20").colors
    drawn = False
    apart = [s.label for s in series if _one_direction_upper(s)]
    for number, s in enumerate(series):
        if _one_direction_upper(s):
            continue
        values = np.asarray(s.values, dtype=float)
        poisson = s.label.startswith("Poisson")
        style = ":" if poisson else ("-" if s.side is Side.UPPER else "--")
        width = 2.4 if s.label.startswith("combined") or PLD_METHOD in s.label else 1.3
        shown = np.where((values > 0) & np.isfinite(values), values, np.nan)  # log axis; ∞/NaN: no point
        drawn = drawn or bool(np.isfinite(shown).any())
        ax.plot(sigmas, shown, style, marker="o" if s.side is Side.UPPER else "^",
                markersize=3, linewidth=width, color="black" if poisson else colours[(2 * number) % 20 + (number // 10) % 2],
                label=f"{s.label} ({s.side.value} bound{'' if s.label.endswith(' only)') else ', max over add and remove'})" + (f", cut by the time budget at σ = {', '.join(f'{sigmas[i]:.3g}' for i in s.cut_sigmas)}" if s.cut_sigmas else ""))
    ax.set_xscale("log")
    if drawn:
        ax.set_yscale("log")
    else:  # e.g. --time-budget 0: nothing to draw, and a log axis of no data is an error in matplotlib
        ax.text(0.5, 0.5, "no method gave a bound", transform=ax.transAxes, ha="center")
    ax.set_xlabel("σ")
    ax.set_ylabel("ε")
    why = "did not apply or was cut by the time budget (the legend says where)" if any(s.cut_sigmas for s in series) else "did not apply"
    # two short lines: one long line is wider than the axes and was clipped at the figure's left edge
    note = f"\nnot drawn, upper bounds on one direction only: {', '.join(apart)}" if apart else ""
    ax.set_title(f"{title}\nupper bounds solid, lower bounds dashed\na missing point: the method {why}{note}", fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    legend_outside(fig, ax)
    save_figure(fig, path, "out")


def _matrix_factory(args: argparse.Namespace, epochs: int):
    """(σ → MatrixMechanism, title) from the matrix flags (the strategy is built and validated once)."""
    from verifier.certify.claim import strategy_from_fields
    from verifier.schemes import MatrixMechanism

    if args.batches is None:
        raise InvalidArgument("batches", None, "--batches is required with --matrix / --matrix-file")
    batches = check_integer("batches", args.batches, minimum=1)
    strategy = strategy_from_fields(batches * epochs, args.matrix, args.matrix_file, args.bands, None, None, None)
    return (lambda sigma: MatrixMechanism(Gaussian(sigma), strategy, batches, epochs)), (
        f"matrix mechanism {strategy.label}, b={batches}, epochs={epochs}"
    )


def _run(args: argparse.Namespace) -> int:
    low = check_positive("sigma_min", args.sigma_min)
    high = check_positive("sigma_max", args.sigma_max)
    if not high >= low:
        raise InvalidArgument("sigma_max", high, f"must be >= sigma_min = {low:g}")
    points = check_integer("points", args.points, minimum=1 if high == low else 2, maximum=MAX_POINTS)
    epochs = check_integer("epochs", args.epochs, minimum=1)
    delta = check_open_unit("delta", args.delta)
    sigmas = np.geomspace(low, high, points)
    budget = None if args.time_budget is None else check_nonnegative("time_budget", args.time_budget)
    progress = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731
    if args.matrix is not None or args.matrix_file is not None:
        make_scheme, title = _matrix_factory(args, epochs)
        series = compare_series(sigmas, 0, 1, epochs, delta, args.method, progress=progress, make_scheme=make_scheme, time_budget=budget)
        title = f"{title}, δ={delta:g}"
    else:
        if args.steps is None:
            raise InvalidArgument("steps", None, "--steps is required for random allocation (or give --matrix for a matrix mechanism)")
        steps = check_integer("steps", args.steps, minimum=1)
        k = check_integer("k", args.k, minimum=1, maximum=steps)
        series = compare_series(sigmas, steps, k, epochs, delta, args.method, progress=progress, time_budget=budget)
        title = f"Gaussian random allocation, t={steps}, k={k}, epochs={epochs}, δ={delta:g}"
    if args.out:
        _plot(sigmas, series, args.out, title)
    if args.json:
        print(json.dumps({
            "title": title, "sigmas": sigmas.tolist(), "out": args.out,
            "series": [
                {"label": s.label, "side": s.side.value, "values": [json_number(v) for v in s.values], "cut_by_time_budget": list(s.cut)}
                for s in series
            ],
        }))
        return 0
    for line in wrapped(f"ε(δ) bounds, {title}"):
        print(line)
    columns = [(f"{s.label} {s.side.value}", [s.cell(i) for i in range(len(sigmas))]) for s in series]
    for line in numbered_table("σ", [f"{sigma:.4g}" for sigma in sigmas], columns):
        print(line)
    if any(s.cut_sigmas for s in series):
        print("cut: stopped or not started because --time-budget was spent at that σ (no bound); —: the method gave no bound")
    if args.out:
        print(f"figure: {args.out}")
    return 0
