"""Sweeps: rigorous ε(δ) brackets (and verdicts) over a grid or list of claims, one after another or in parallel on dask,
each finished point stored at once so that an interrupted sweep resumes without recomputing it.

A *point* is a claim as JSON (:func:`~verifier.certify.claim.parse_claim`) whose ``epsilon`` may be
left out: every point gets each applicable method's rigorous bounds on ε(claimed δ) per direction
and the best bracket over the directions the neighbouring relation requires (the maximum over
directions, Feldman & Shenfeld, Def 2.2); a point that states ε also gets the verdict of
:func:`~verifier.certify.verdict.certify` (Monte Carlo is not run: a sweep reports bounds only, so
that its numbers do not depend on where a point ran).

Points are keyed by their *canonical parameters*: the validated claim with defaults filled in,
serialised with sorted keys, so ``{"sigma": 1}`` and ``{"sigma": 1.0, "sensitivity": 1.0}`` are the
same point. :class:`ResultStore` (SQLite) holds one row per finished point; :func:`run_sweep`
skips the points already stored and writes each new one as it finishes.
"""

from __future__ import annotations

import copy
import datetime
import itertools
import json
import math
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

from verifier._types import Quantity, json_number
from verifier._validation import check_nonnegative
from verifier.certify.claim import Claim, parse_claim
from verifier.certify.method import Guarantee
from verifier.certify.portfolio import collect_bounds, cut_by_budget, select_methods
from verifier.certify.verdict import certify
from verifier.errors import InvalidArgument

__all__ = ["GRID_FIELDS", "grid_points", "canonical_key", "evaluate_point", "ResultStore", "SweepRun", "run_sweep", "flat_rows", "as_float"]

#: Where each sweepable name lives in a claim.
GRID_FIELDS: dict[str, str] = {
    "sigma": "mechanism",
    "scale": "mechanism",
    "sensitivity": "mechanism",
    "epsilon0": "mechanism",
    "delta0": "mechanism",
    "rate": "scheme",
    "steps": "scheme",
    "epochs": "scheme",
    "times": "scheme",
    "k": "scheme",
    "epsilon": "claim",
    "delta": "claim",
}

#: Placeholder ε for validating a point that states none (only δ matters for its ε(δ) bracket).
_NO_EPSILON = 0.0


def grid_points(base: Mapping[str, Any], grid: Mapping[str, Sequence[Any]]) -> list[dict]:
    """The claims of the cartesian product of ``grid`` (name -> values; names of
    :data:`GRID_FIELDS`) applied to ``base``, in row-major order of ``grid``'s keys."""
    for name, values in grid.items():
        if name not in GRID_FIELDS:
            raise InvalidArgument("grid", name, f"must be one of {', '.join(GRID_FIELDS)}")
        if not values:
            raise InvalidArgument(f"grid.{name}", list(values), "must list at least one value")
    points = []
    for combination in itertools.product(*grid.values()):
        point = copy.deepcopy(dict(base))
        for name, value in zip(grid, combination):
            where = GRID_FIELDS[name]
            if where == "claim":
                point[name] = value
            else:
                point[where] = {**point.get(where, {}), name: value}
        points.append(point)
    return points


def _parse(point: Mapping[str, Any]) -> tuple[Claim, bool]:
    """The validated claim of a point and whether it states ε."""
    stated = "epsilon" in point
    claim = parse_claim(point if stated else {**point, "epsilon": _NO_EPSILON})
    return claim, stated


def canonical_key(point: Mapping[str, Any]) -> str:
    """The point's canonical parameters as a string (module docstring); validates the point."""
    claim, stated = _parse(point)
    canonical = claim.to_dict()
    canonical.pop("source", None)
    if not stated:
        canonical.pop("epsilon")
    return json.dumps(canonical, sort_keys=True, separators=(",", ":"))


def evaluate_point(point: Mapping[str, Any], only: Sequence[str] | None = None, deadline: float | None = None) -> dict:
    """Bounds on ε(claimed δ) from every applicable rigorous method (or those in ``only``), per
    method and direction, the best bracket over the required directions, and the verdict when the
    point states ε. A JSON-ready dict; the same on every machine (no randomness). With ``deadline``
    (a ``time.time()`` instant: a sweep's ``--time-budget``), the methods get the time left until
    then (:func:`~verifier.certify.portfolio.collect_bounds`) and ``cut_by_time_budget`` names those it cut."""
    started = time.perf_counter()
    claim, stated = _parse(point)
    rigorous = [m.name for m in select_methods(claim.model, only) if m.returns != frozenset({Guarantee.ESTIMATE})]
    if not rigorous:
        raise InvalidArgument("method", only or "all", f"no method with rigorous bounds applies to {claim.model!r}")

    def left() -> float | None:
        return None if deadline is None else max(0.0, deadline - time.time())

    collected = collect_bounds(claim.model, Quantity.EPSILON, claim.delta, claim.directions, only=rigorous, time_budget=left())
    cut = cut_by_budget(collected.skipped)
    per_method: dict[str, dict[str, dict[str, Any]]] = {}
    for bound in collected.bounds:
        if bound.rigorous:
            slot = per_method.setdefault(bound.method, {}).setdefault(bound.direction.value, {})
            previous = slot.get(bound.side.value)
            better = min if bound.side.value == "upper" else max
            slot[bound.side.value] = bound.value if previous is None else better(previous, bound.value)
    combined = collected.combined
    result = {
        "epsilon_lower": json_number(combined.lower),
        "epsilon_upper": json_number(combined.upper),
        "methods": {m: {d: {s: json_number(v) for s, v in sides.items()} for d, sides in dirs.items()} for m, dirs in per_method.items()},
        "skipped": list(collected.skipped),
        "verdict": None,
    }
    if stated:
        outcome = certify(claim, only=rigorous, time_budget=left())
        result["verdict"] = outcome.verdict.value
        cut |= set().union(*(cut_by_budget(c.skipped) for c in (outcome.delta, outcome.epsilon) if c is not None))
    if cut:
        result["cut_by_time_budget"] = sorted(cut)
    result["seconds"] = time.perf_counter() - started
    return result


class ResultStore:
    """Finished points in an SQLite file: one row per canonical key, written and committed as each
    point finishes (so a killed sweep loses at most the points still running)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self._db = sqlite3.connect(self.path)
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS points (key TEXT PRIMARY KEY, point TEXT NOT NULL, result TEXT NOT NULL, finished TEXT NOT NULL)"
            )
            self._db.commit()
        except sqlite3.Error as exc:
            raise InvalidArgument("store", str(path), f"cannot be opened as an SQLite results store ({exc})") from None

    def keys(self) -> set[str]:
        return {row[0] for row in self._db.execute("SELECT key FROM points")}

    def put(self, key: str, point: Mapping[str, Any], result: Mapping[str, Any]) -> None:
        finished = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="microseconds")
        self._db.execute(
            "INSERT OR IGNORE INTO points VALUES (?, ?, ?, ?)", (key, json.dumps(point, sort_keys=True), json.dumps(result), finished)
        )
        self._db.commit()

    def rows(self) -> list[tuple[str, dict, dict, str]]:
        """(key, point, result, finished) for every stored point, in insertion order."""
        return [(k, json.loads(p), json.loads(r), f) for k, p, r, f in self._db.execute("SELECT key, point, result, finished FROM points ORDER BY rowid")]

    def get(self, key: str) -> dict | None:
        row = self._db.execute("SELECT result FROM points WHERE key = ?", (key,)).fetchone()
        return None if row is None else json.loads(row[0])

    def close(self) -> None:
        self._db.close()


@dataclass(frozen=True)
class SweepRun:
    """What one call of :func:`run_sweep` did: the points of the sweep (keys in order), how many
    were already stored, how many it computed and stored, and how many the time budget cut (not
    stored: a later run computes them whole)."""

    keys: tuple[str, ...]
    already_stored: int
    computed: int
    cut: int = 0


def _unique(points: Iterable[Mapping[str, Any]]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    seen = set()
    for point in points:
        key = canonical_key(point)
        if key not in seen:
            seen.add(key)
            yield key, point


def run_sweep(
    points: Sequence[Mapping[str, Any]],
    store: ResultStore,
    *,
    only: Sequence[str] | None = None,
    workers: int | None = 1,
    scheduler: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    time_budget: float | None = None,
) -> SweepRun:
    """Evaluate every point not yet in ``store`` (:func:`evaluate_point`) and store each as it
    finishes. ``scheduler`` (an address) uses an existing dask cluster; ``workers`` > 1 processes
    of a local dask cluster; otherwise (1 or None) the points run one after another in this process,
    without dask. ``progress(done, total)`` is called after each point. With ``time_budget``
    (seconds, the whole sweep's), each point's methods get what is left of it, no point starts once
    it is spent (dask's queued points are cancelled), and a point whose methods it cut is not stored
    (:attr:`SweepRun.cut`). An interruption (KeyboardInterrupt) propagates after the cluster is shut
    down; every point finished before it is in the store.
    """
    todo = list(_unique(points))
    keys = tuple(k for k, _ in todo)
    stored = store.keys()
    missing = [(k, p) for k, p in todo if k not in stored]
    done, computed = len(todo) - len(missing), 0
    deadline = None if time_budget is None else time.time() + check_nonnegative("time_budget", time_budget)
    if progress is not None:
        progress(done, len(todo))
    in_process = scheduler is None and (workers is None or workers == 1)
    results = _in_process(missing, only, deadline) if in_process else _on_dask(missing, only, workers, scheduler, deadline)
    for key, point, result in results:
        done += 1
        if "cut_by_time_budget" not in result:
            store.put(key, point, result)
            computed += 1
        if progress is not None:
            progress(done, len(todo))
    return SweepRun(keys, len(todo) - len(missing), computed, len(missing) - computed)


def _in_process(missing: list[tuple[str, Mapping[str, Any]]], only: Sequence[str] | None, deadline: float | None):
    """Yield (key, point, result) for each point in turn, none started once ``deadline`` passed."""
    for key, point in missing:
        if deadline is not None and time.time() >= deadline:
            return
        yield key, point, evaluate_point(point, only, deadline)


def _on_dask(
    missing: list[tuple[str, Mapping[str, Any]]], only: Sequence[str] | None, workers: int | None, scheduler: str | None, deadline: float | None
):
    """Yield (key, point, result) as the dask workers finish them (local cluster or ``scheduler``);
    at ``deadline``, the points not finished are cancelled (a dask worker runs a point in a thread,
    where the budget's interrupt cannot reach it: the run stops waiting instead)."""
    try:
        from dask.distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise InvalidArgument(
            "workers", workers, "needs dask.distributed to run points in parallel", fix="pip install 'verifier[dask]', or --workers 1 to run them one after another"
        ) from None
    cluster = None
    if scheduler is None:
        if not (isinstance(workers, int) and workers >= 1):
            raise InvalidArgument("workers", workers, "must be an integer >= 1")
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)
        client = Client(cluster)
    else:
        try:
            client = Client(scheduler, timeout="10s")
        except (OSError, TimeoutError, ValueError) as exc:  # ValueError: not an address
            raise InvalidArgument("scheduler", scheduler, f"cannot be reached ({exc})", fix="give e.g. tcp://host:8786") from None
    spent = False
    try:
        futures = {client.submit(evaluate_point, dict(point), only, deadline, pure=False): (key, point) for key, point in missing}
        waiting = as_completed(futures)
        while True:
            try:
                future = next(waiting) if deadline is None else _next_before(waiting, deadline)
            except StopIteration:
                return
            if future is None:  # the budget is spent: what is still running or queued is cut
                spent = True
                return
            key, point = futures[future]
            yield key, point, future.result()
    finally:
        if spent:
            client.cancel(list(futures))
        client.close()
        if cluster is not None:
            _close_now(cluster) if spent else cluster.close()


def _close_now(cluster) -> None:
    """Stop a local cluster whose workers may be busy in a point the budget cut: their processes
    are terminated instead of waiting for the point to end."""
    import contextlib

    for worker in list(cluster.workers.values()):
        process = getattr(getattr(worker, "process", None), "process", None)  # the nanny's worker process
        with contextlib.suppress(Exception):
            process.terminate()
    cluster.close()


def _next_before(waiting, deadline: float):
    """The next finished future of a dask ``as_completed``, or None once ``deadline`` passes first."""
    while not waiting.has_ready():
        if waiting.is_empty():
            raise StopIteration
        if time.time() >= deadline:
            return None
        time.sleep(0.05)
    return next(waiting)


def flat_rows(store: ResultStore, keys: Sequence[str], names: Sequence[str]) -> tuple[list[str], list[list[Any]]]:
    """A table of the sweep: the swept ``names``, the best ε bracket, the verdict, one column per
    method, direction and side, and the seconds; one row per key (in order) that is stored."""
    records = []
    columns: list[str] = []
    for key in keys:
        result = store.get(key)
        if result is None:
            continue
        params = json.loads(key)
        flat = {name: _lookup(params, name) for name in names}
        flat["epsilon_lower"], flat["epsilon_upper"], flat["verdict"] = result["epsilon_lower"], result["epsilon_upper"], result["verdict"]
        for method, dirs in sorted(result["methods"].items()):
            for direction, sides in sorted(dirs.items()):
                for side, value in sorted(sides.items()):
                    column = f"{method}:{direction}:{side}"
                    flat[column] = value
                    if column not in columns:
                        columns.append(column)
        flat["seconds"] = result["seconds"]
        records.append(flat)
    header = [*names, "epsilon_lower", "epsilon_upper", "verdict", *columns, "seconds"]
    return header, [[r.get(c) for c in header] for r in records]


def _lookup(params: Mapping[str, Any], name: str) -> Any:
    where = GRID_FIELDS[name]
    return params.get(name) if where == "claim" else params[where].get(name)


def as_float(value: Any) -> float:
    """A stored JSON number back to float (``"inf"`` -> ∞, null -> NaN)."""
    if value is None:
        return math.nan
    if isinstance(value, str):
        return float(value)
    return float(value)
