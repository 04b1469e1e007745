"""Sweeps (issue 18): canonical keys, a store that is written as points finish, resumption without
recomputation, dask runs equal to in-process runs, brackets that contain an independent value,
and the interrupted-and-resumed 3×3×2 sweep of the issue's done-when list."""

import json
import math
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest
import mpmath

from verifier.certify.sweep import ResultStore, as_float, canonical_key, evaluate_point, flat_rows, grid_points, run_sweep
from verifier.cli import main
from verifier.errors import InvalidArgument

BASE = {"mechanism": {"name": "gaussian"}, "scheme": {"name": "composed"}, "delta": 1e-5}
GRID = {"sigma": [2.0, 4.0, 8.0], "times": [1, 10]}


def gaussian_epsilon(sigma: float, times: int, delta: float) -> mpmath.mpf:
    """Exact ε(δ) of ``times`` composed Gaussian mechanisms (one Gaussian of σ/√times), sensitivity 1
    (Balle & Wang 2018, Thm 8), by bisection at 50 digits on an independent transcription of δ(ε)."""
    with mpmath.workdps(50):
        s = mpmath.mpf(sigma) / mpmath.sqrt(times)
        f = lambda e: mpmath.ncdf(1 / (2 * s) - e * s) - mpmath.exp(e) * mpmath.ncdf(-1 / (2 * s) - e * s) - mpmath.mpf(delta)
        low, high = mpmath.mpf(0), mpmath.mpf(100)
        for _ in range(200):  # δ(ε) decreases in ε
            middle = (low + high) / 2
            low, high = (middle, high) if f(middle) > 0 else (low, middle)
        return low


def test_canonical_key_fills_defaults_and_separates_points():
    a = {"mechanism": {"name": "gaussian", "sigma": 1}, "scheme": {"name": "single"}, "delta": 1e-5}
    b = {"mechanism": {"name": "gaussian", "sigma": 1.0, "sensitivity": 1.0}, "scheme": {"name": "single"}, "neighboring": "add_or_remove", "delta": 1e-5}
    assert canonical_key(a) == canonical_key(b)
    assert canonical_key(a) != canonical_key({**a, "delta": 1e-6})
    assert canonical_key(a) != canonical_key({**a, "epsilon": 1.0})
    with pytest.raises(InvalidArgument, match="sigma"):
        canonical_key({**a, "mechanism": {"name": "gaussian", "sigma": -1}})


def test_grid_points_and_brackets_contain_the_closed_form(tmp_path):
    # Catches: a grid that drops or repeats combinations, a key/value mix-up between points and
    # results, a bracket taken over the wrong direction.
    points = grid_points(BASE, GRID)
    assert len(points) == 6 and len({canonical_key(p) for p in points}) == 6
    store = ResultStore(tmp_path / "s.sqlite")
    swept = run_sweep(points, store, workers=None)
    header, rows = flat_rows(store, swept.keys, list(GRID))
    for row in rows:
        sigma, times = row[0], row[1]
        exact = gaussian_epsilon(sigma, times, 1e-5)
        lower, upper = as_float(row[header.index("epsilon_lower")]), as_float(row[header.index("epsilon_upper")])
        assert lower <= exact <= upper and upper - lower <= 1e-9 * upper


def test_interrupted_sweep_resumes_without_recomputing(tmp_path):
    points = grid_points(BASE, GRID)
    store = ResultStore(tmp_path / "s.sqlite")

    def stop_after_three(done, total):
        if done == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_sweep(points, store, workers=None, progress=stop_after_three)
    first = {k: f for k, _, _, f in store.rows()}
    assert len(first) == 3
    swept = run_sweep(points, store, workers=None)
    assert (swept.already_stored, swept.computed) == (3, 3)
    rows = store.rows()
    assert len(rows) == 6 and all(first[k] == f for k, _, _, f in rows if k in first)
    assert run_sweep(points, store, workers=None).computed == 0


def test_dask_local_cluster_gives_the_in_process_numbers(tmp_path):
    pytest.importorskip("dask.distributed")
    points = grid_points(BASE, {"sigma": [2.0, 3.0], "times": [5]})
    on_dask = ResultStore(tmp_path / "dask.sqlite")
    swept = run_sweep(points, on_dask, workers=2)
    for key, point in zip(swept.keys, points):
        stored = on_dask.get(key)
        here = evaluate_point(point)
        assert {k: v for k, v in stored.items() if k != "seconds"} == {k: v for k, v in here.items() if k != "seconds"}


def test_existing_cluster_by_scheduler_address(tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    points = grid_points(BASE, {"sigma": [2.0], "times": [3, 4]})
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        store = ResultStore(tmp_path / "s.sqlite")
        swept = run_sweep(points, store, scheduler=cluster.scheduler_address)
        assert swept.computed == 2 and len(store.rows()) == 2
    with pytest.raises(InvalidArgument, match="scheduler"):
        run_sweep(points, ResultStore(tmp_path / "t.sqlite"), scheduler="no-port-here")


def test_cli_sweep_table_csv_and_errors(tmp_path, capsys):
    store, table = tmp_path / "s.sqlite", tmp_path / "t.csv"
    argv = ["sweep", "--scheme", "composed", "--grid", "sigma=2,4", "--grid", "times=1,10", "--delta", "1e-5", "--epsilon", "3"]
    argv += ["--store", str(store), "--in-process", "--csv", str(table), "--json"]
    assert main(argv) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["computed"] == 4 and len(payload["rows"]) == 4
    verdicts = {(r[0], r[1]): r[payload["columns"].index("verdict")] for r in payload["rows"]}
    # ε(1e-5) of σ=2 is 1.76 (one step) and of σ=2/√10 is 8.3: CERTIFIED at ε=3 and VIOLATED
    assert verdicts[(2.0, 1)] == "CERTIFIED" and verdicts[(2.0, 10)] == "VIOLATED"
    assert table.read_text().splitlines()[0].startswith("sigma,times,epsilon_lower,epsilon_upper,verdict")
    assert main(argv) == 0 and json.loads(capsys.readouterr().out)["computed"] == 0
    code = main(["sweep", "--scheme", "composed", "--grid", "sigma=2", "--sigma", "1", "--times", "2", "--delta", "1e-5", "--store", str(store)])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and "sigma" in err
    code = main(["sweep", "--scheme", "composed", "--grid", "sigma=a", "--times", "2", "--delta", "1e-5", "--store", str(store)])
    assert code == 2 and "grid.sigma" in capsys.readouterr().err


@pytest.mark.slow
def test_done_when_3x3x2_sweep_killed_and_resumed_on_dask(tmp_path):
    """Issue 18, done when 2: a 3×3×2 sweep on a 2-worker local dask cluster, interrupted (SIGINT)
    after some points, rerun: finished points are not recomputed (store rows untouched, the rerun
    computes only the rest) and every number equals the in-process evaluation's."""
    pytest.importorskip("dask.distributed")
    store = tmp_path / "sweep.sqlite"
    argv = [sys.executable, "-m", "verifier", "sweep", "--scheme", "poisson", "--grid", "sigma=0.8,1.0,1.2", "--grid", "rate=0.01,0.02,0.05"]
    argv += ["--grid", "steps=100,1000", "--delta", "1e-5", "--method", "rdp", "--store", str(store), "--workers", "2", "--json"]
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    deadline = time.monotonic() + 300
    stored = 0
    while time.monotonic() < deadline and process.poll() is None:
        if store.exists():
            with sqlite3.connect(store) as db:
                try:
                    stored = db.execute("SELECT count(*) FROM points").fetchone()[0]
                except sqlite3.OperationalError:
                    stored = 0
            if stored >= 3:
                break
        time.sleep(0.05)
    assert 3 <= stored < 18, f"the sweep was not caught mid-way ({stored} points stored)"
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 130 and "run the same command again to resume" in err
    before = {k: f for k, _, _, f in ResultStore(store).rows()}
    assert 3 <= len(before) < 18

    rerun = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stderr
    payload = json.loads(rerun.stdout)
    assert (payload["already_stored"], payload["computed"]) == (len(before), 18 - len(before))
    after = ResultStore(store)
    rows = after.rows()
    assert len(rows) == 18 and all(before[k] == f for k, _, _, f in rows if k in before)
    for key, point, result, _ in rows:
        here = evaluate_point(point, ["rdp"])
        assert {k: v for k, v in result.items() if k != "seconds"} == {k: v for k, v in here.items() if k != "seconds"}


def test_cli_sweep_plot_and_report_are_self_contained(tmp_path, capsys):
    plot, report = tmp_path / "p.png", tmp_path / "r.html"
    argv = ["sweep", "--scheme", "composed", "--grid", "sigma=2,4,8", "--grid", "times=1,10", "--delta", "1e-5", "--in-process"]
    argv += ["--store", str(tmp_path / "s.sqlite"), "--plot", str(plot), "--report", str(report), "--x", "sigma"]
    assert main(argv) == 0
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = report.read_text(encoding="utf-8")
    assert text.count("<img") == 1 and 'src="data:image/png;base64,' in text
    assert "http://" not in text and "https://" not in text and "<script" not in text
    assert text.count("<tr>") == 1 + 6  # header and one row per point
    code = main(argv[:-2] + ["--x", "delta"])
    assert code == 2 and "x" in capsys.readouterr().err


def test_cli_sweep_parquet_round_trips_the_table(tmp_path, capsys):
    pq = pytest.importorskip("pyarrow.parquet")
    target = tmp_path / "t.parquet"
    argv = ["sweep", "--scheme", "composed", "--grid", "sigma=2,4", "--times", "3", "--delta", "1e-5", "--in-process"]
    argv += ["--store", str(tmp_path / "s.sqlite"), "--parquet", str(target), "--json"]
    assert main(argv) == 0
    payload = json.loads(capsys.readouterr().out)
    table = pq.read_table(target).to_pylist()
    assert [r["sigma"] for r in table] == [2.0, 4.0]
    assert [r["epsilon_upper"] for r in table] == [as_float(r[payload["columns"].index("epsilon_upper")]) for r in payload["rows"]]


def test_dask_sweep_stops_at_its_budget_and_stores_nothing_cut(tmp_path):
    # the mutant: a point cut by the budget stored (its partial bracket would be kept on resume)
    pytest.importorskip("dask.distributed")
    slow = {"mechanism": {"name": "gaussian", "sigma": 0.5}, "scheme": {"name": "poisson", "rate": 0.01, "steps": 100000}, "delta": 1e-5}
    store = ResultStore(tmp_path / "s.sqlite")
    swept = run_sweep(grid_points(slow, {"sigma": [0.5, 0.6]}), store, workers=2, time_budget=0.5)
    assert swept.computed == 0 and swept.cut == 2 and store.rows() == []
