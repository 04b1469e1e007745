"""Run a Monte Carlo estimate of δ(ε) in-process or on a dask cluster, resumable from a results file.

:func:`estimate_delta` is the entry point: it plans the chunks (:mod:`verifier.montecarlo.plan`),
skips those already in the results file, runs the rest (in this process, on a dask scheduler given
by address, or on a local dask cluster of N worker processes), appends each finished chunk to the
file as it arrives, and combines all chunks into :class:`~verifier._types.Estimate` s. A progress bar
(rich) shows samples done and the current interval of the first (direction, ε).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Callable, Iterator, Sequence

from verifier._types import Direction, Estimate
from verifier._validation import check_choice, check_integer, check_open_unit, check_real_array
from verifier.errors import InvalidArgument
from verifier.montecarlo.intervals import INTERVALS
from verifier.montecarlo.plan import Plan, chunk_sizes, combine, run_chunk, supports_order_statistics, uses_importance
from verifier.montecarlo.store import ChunkStore
from verifier.schemes import Scheme

__all__ = ["McResult", "estimate_delta", "DEFAULT_CHUNK_SIZE", "IMPORTANCE"]

#: Draws per chunk: large enough to amortise the per-chunk overhead, small enough that a killed run
#: loses little and the progress bar moves.
DEFAULT_CHUNK_SIZE = 1 << 16

IMPORTANCE = ("auto", "on", "off")

Task = tuple[Direction, int, int]  # (direction, chunk index, chunk size)


@dataclass(frozen=True)
class McResult:
    """Estimates per direction (one per ε, in the order given) and how the chunks were obtained."""

    estimates: dict  # Direction -> tuple[Estimate, ...]
    chunks_run: int
    chunks_resumed: int
    plan: Plan

    def at(self, direction: Direction, index: int = 0) -> Estimate:
        return self.estimates[direction][index]


def _plan(scheme, epsilons, directions, seed, chunk_size, importance, order_statistics) -> Plan:
    eps = check_real_array("epsilon", epsilons)
    if eps.size == 0:
        raise InvalidArgument("epsilon", "[]", "give at least one ε")
    dirs = tuple(dict.fromkeys(directions))
    if not dirs or not all(isinstance(d, Direction) for d in dirs):
        raise InvalidArgument("directions", directions, "must be a non-empty sequence of Direction.ADD / Direction.REMOVE")
    mode = check_choice("importance", importance, IMPORTANCE)
    applicable = uses_importance(scheme)
    if mode == "on" and not applicable:
        raise InvalidArgument("importance", "on", "importance sampling applies only to Gaussian allocation with k=1, epochs=1")
    if order_statistics and not supports_order_statistics(scheme):
        raise InvalidArgument("order_statistics", True, "order statistics apply only to Gaussian allocation")
    if order_statistics and mode == "on":
        raise InvalidArgument("importance", "on", "choose importance sampling or order statistics, not both")
    return Plan(
        scheme=scheme,
        epsilons=tuple(float(e) for e in eps),
        directions=dirs,
        seed=check_integer("seed", seed, minimum=0),
        chunk_size=check_integer("chunk_size", chunk_size, minimum=1),
        importance=applicable and mode != "off" and not order_statistics,
        order_statistics=bool(order_statistics),
    )


def _in_process(plan: Plan, tasks: Sequence[Task]) -> Iterator[dict]:
    for direction, index, size in tasks:
        yield run_chunk(plan, direction, index, size)


@contextlib.contextmanager
def _dask_client(scheduler: str | None, workers: int | None):
    from distributed import Client, LocalCluster

    if scheduler is not None:
        with Client(scheduler) as client:
            yield client
        return
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with Client(cluster) as client:
            yield client


def _on_dask(plan: Plan, tasks: Sequence[Task], scheduler: str | None, workers: int | None) -> Iterator[dict]:
    from distributed import as_completed

    with _dask_client(scheduler, workers) as client:
        futures = [client.submit(run_chunk, plan, d, i, n, pure=False) for d, i, n in tasks]
        for future in as_completed(futures):
            yield future.result()


@contextlib.contextmanager
def _progress_bar(enabled: bool, total: int, done: int) -> Iterator[Callable[[int, str], None]]:
    if not enabled:
        yield lambda advance, text: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    columns = (TextColumn("samples"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(), TextColumn("{task.description}"))
    with Progress(*columns, console=Console(stderr=True), transient=False) as progress:
        task = progress.add_task("", total=total, completed=done)
        yield lambda advance, text: progress.update(task, advance=advance, description=text)


def estimate_delta(
    scheme: Scheme,
    epsilons: float | Sequence[float],
    directions: Sequence[Direction],
    samples: int,
    *,
    seed: int = 0,
    confidence: float = 0.99,
    interval: str = "kl",
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    importance: str = "auto",
    order_statistics: bool = False,
    results: str | None = None,
    scheduler: str | None = None,
    workers: int | None = None,
    progress: bool = False,
) -> McResult:
    """Monte Carlo estimates of δ(ε) = E[(1 − e^{ε−L})_+] for ``scheme`` at every ε, per direction,
    with confidence intervals (joint level ``confidence`` for each (direction, ε); simultaneous
    coverage of k intervals is at least 1 − k(1 − confidence) by the union bound).

    Samplers: :mod:`verifier.montecarlo.samplers` (for allocation with k > 1 the estimate is of the
    Lemma 3.2 upper bound); importance sampling (Chua et al. 2024a) for Gaussian allocation with
    k = 1, one epoch, unless ``importance="off"``; ``order_statistics`` (Gaussian allocation) draws an
    upper-biased loss at O(R) rather than O(t) cost per sample, so the estimate is of an UPPER bound
    on δ and its interval's lower end is 0 (:mod:`verifier.montecarlo.order_statistics`). Intervals: :mod:`verifier.montecarlo.intervals`.
    ``results`` names a JSON-lines file that receives each finished chunk and from which an earlier,
    interrupted run with the same plan is resumed. ``scheduler`` (a dask address) or ``workers``
    (a local dask cluster of that many processes) run the chunks on dask; the numbers are the same
    as in-process for the same seed and chunk size. Results are Estimates, never Bounds.
    """
    plan = _plan(scheme, epsilons, directions, seed, chunk_size, importance, order_statistics)
    n = check_integer("samples", samples, minimum=1)
    level = check_open_unit("confidence", confidence)
    check_choice("interval", interval, INTERVALS)
    if scheduler is not None and workers is not None:
        raise InvalidArgument("workers", workers, "give either a scheduler address or a number of local workers, not both")
    if workers is not None:
        check_integer("workers", workers, minimum=1)

    sizes = chunk_sizes(n, plan.chunk_size)
    keys = {d: plan.key(d) for d in plan.directions}
    store = ChunkStore(results)
    saved = store.load(set(keys.values()))
    records: dict[Direction, list[dict]] = {d: [] for d in plan.directions}
    tasks: list[Task] = []
    for d in plan.directions:
        for index, size in enumerate(sizes):
            record = saved.get((keys[d], index))
            if record is not None and record["size"] == size:
                records[d].append(record)
            else:
                tasks.append((d, index, size))
    resumed = sum(len(r) for r in records.values())

    first = plan.directions[0]
    total_draws = n * len(plan.directions)
    done = sum(r["size"] for rs in records.values() for r in rs)

    def status() -> str:
        if not records[first]:
            return ""
        head = combine(plan, first, records[first], level, interval)[0]
        return f"{first.value} δ({head.at:g}) ∈ [{head.lower:.4g}, {head.upper:.4g}]"

    if tasks:
        run = _in_process(plan, tasks) if scheduler is None and workers is None else _on_dask(plan, tasks, scheduler, workers)
        with _progress_bar(progress, total_draws, done) as advance:
            for record in run:
                store.append(record)
                records[Direction(record["direction"])].append(record)
                advance(record["size"], status() if progress else "")
    estimates = {d: tuple(combine(plan, d, sorted(records[d], key=lambda r: r["chunk"]), level, interval)) for d in plan.directions}
    return McResult(estimates, chunks_run=len(tasks), chunks_resumed=resumed, plan=plan)

