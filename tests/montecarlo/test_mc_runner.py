"""Chunked runs: reproducible for a seed and chunk size, independent of chunk order and of the
backend (in-process or a local 2-worker dask cluster), resumable from the results file, including
after the process is killed halfway."""

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from verifier._types import Direction
from verifier.errors import InvalidArgument
from verifier.montecarlo import estimate_delta
from verifier.montecarlo.plan import combine, run_chunk
from verifier.pairs import Gaussian, Laplace
from verifier.schemes import Allocation, Poisson

SCHEME = Allocation(Gaussian(1.0), 20)
EPS = [0.0, 0.5, 1.0]
BOTH = [Direction.ADD, Direction.REMOVE]


def values(result):
    return {d.value: [(e.value, e.lower, e.upper, e.samples) for e in ests] for d, ests in result.estimates.items()}


def test_same_seed_same_numbers_and_directions_are_independent_streams():
    a = estimate_delta(SCHEME, EPS, BOTH, 20_000, seed=1, chunk_size=3000)
    b = estimate_delta(SCHEME, EPS, BOTH, 20_000, seed=1, chunk_size=3000)
    assert values(a) == values(b)
    remove_only = estimate_delta(SCHEME, EPS, [Direction.REMOVE], 20_000, seed=1, chunk_size=3000)
    assert values(remove_only)["remove"] == values(a)["remove"]
    other = estimate_delta(SCHEME, EPS, BOTH, 20_000, seed=2, chunk_size=3000)
    assert values(other) != values(a)


def test_chunk_order_does_not_matter():
    result = estimate_delta(SCHEME, EPS, [Direction.REMOVE], 10_000, seed=4, chunk_size=1000)
    plan = result.plan
    records = [run_chunk(plan, Direction.REMOVE, i, 1000) for i in range(10)]
    forward = combine(plan, Direction.REMOVE, records, 0.99, "kl")
    backward = combine(plan, Direction.REMOVE, records[::-1], 0.99, "kl")
    assert forward == backward == list(result.estimates[Direction.REMOVE])


def test_resume_from_results_file_reuses_saved_chunks(tmp_path):
    path = tmp_path / "run.jsonl"
    full = estimate_delta(SCHEME, EPS, BOTH, 10_000, seed=3, chunk_size=2000, results=str(path))
    assert (full.chunks_run, full.chunks_resumed) == (10, 0)
    lines = path.read_text().splitlines()
    # keep 3 chunks and a line torn by a kill in the middle of a write
    path.write_text("\n".join(lines[:3]) + "\n" + lines[3][: len(lines[3]) // 2])
    again = estimate_delta(SCHEME, EPS, BOTH, 10_000, seed=3, chunk_size=2000, results=str(path))
    assert (again.chunks_run, again.chunks_resumed) == (7, 3)
    assert values(again) == values(full)
    # the file is whole again: a third run computes nothing
    third = estimate_delta(SCHEME, EPS, BOTH, 10_000, seed=3, chunk_size=2000, results=str(path))
    assert (third.chunks_run, third.chunks_resumed) == (0, 10)
    assert values(third) == values(full)
    # a different plan (seed) in the same file does not reuse those chunks
    other = estimate_delta(SCHEME, EPS, BOTH, 10_000, seed=4, chunk_size=2000, results=str(path))
    assert other.chunks_resumed == 0


def test_more_samples_extend_a_saved_run(tmp_path):
    path = tmp_path / "run.jsonl"
    estimate_delta(SCHEME, EPS, [Direction.ADD], 4000, seed=5, chunk_size=1000, results=str(path))
    more = estimate_delta(SCHEME, EPS, [Direction.ADD], 6000, seed=5, chunk_size=1000, results=str(path))
    assert (more.chunks_run, more.chunks_resumed) == (2, 4)
    assert values(more) == values(estimate_delta(SCHEME, EPS, [Direction.ADD], 6000, seed=5, chunk_size=1000))


def test_dask_scheduler_with_two_workers_gives_the_in_process_numbers():
    """A scheduler given by address (here a local 2-process cluster; the --workers path is exercised
    by the kill-and-resume test below)."""
    distributed = pytest.importorskip("distributed")
    local = {s: estimate_delta(s, EPS, BOTH, 12_000, seed=6, chunk_size=2500) for s in (Poisson(Laplace(1.0), 0.2, 5), SCHEME)}
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        for scheme, expected in local.items():
            on_dask = estimate_delta(scheme, EPS, BOTH, 12_000, seed=6, chunk_size=2500, scheduler=cluster.scheduler_address)
            assert values(on_dask) == values(expected)


def test_killed_dask_run_resumes_from_saved_chunks(tmp_path):
    pytest.importorskip("distributed")
    path = tmp_path / "run.jsonl"
    args = [
        sys.executable, "-m", "verifier", "mc", "--mechanism", "gaussian", "--sigma", "1", "--scheme", "allocation",
        "--steps", "1000", "--epsilon", "0.0", "--direction", "remove", "--samples", str(32 * 2048), "--seed", "9",
        "--chunk-size", "2048", "--importance", "off", "--results", str(path), "--json",
    ]
    proc = subprocess.Popen(args + ["--workers", "2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            if path.exists() and len(path.read_bytes().splitlines()) >= 3:
                break
            time.sleep(0.02)
        assert proc.poll() is None, "the run finished before it could be killed"
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)  # the CLI and the dask processes it started
        except ProcessLookupError:
            pass
        proc.wait(timeout=60)
    saved = len([ln for ln in path.read_bytes().splitlines() if ln.endswith(b"}")])
    assert 3 <= saved < 32
    resumed = json.loads(subprocess.run(args + ["--workers", "2"], capture_output=True, check=True, text=True).stdout)
    assert resumed["chunks_resumed"] >= saved and resumed["chunks_run"] + resumed["chunks_resumed"] == 32
    fresh = json.loads(subprocess.run([a for a in args if a not in ("--results", str(path))], capture_output=True, check=True, text=True).stdout)
    assert fresh["estimate"] > 0  # a non-trivial number to compare
    for field in ("estimate", "lower", "upper", "samples"):
        assert resumed[field] == fresh[field]


def test_invalid_runs_name_the_parameter():
    with pytest.raises(InvalidArgument, match="importance"):
        estimate_delta(Poisson(Gaussian(1.0), 0.1, 2), [1.0], BOTH, 10, importance="on")
    with pytest.raises(InvalidArgument, match="epsilon"):
        estimate_delta(SCHEME, [], BOTH, 10)
    with pytest.raises(InvalidArgument, match="directions"):
        estimate_delta(SCHEME, [1.0], ["add"], 10)
    with pytest.raises(InvalidArgument, match="samples"):
        estimate_delta(SCHEME, [1.0], BOTH, 0)
    with pytest.raises(InvalidArgument, match="workers"):
        estimate_delta(SCHEME, [1.0], BOTH, 10, scheduler="tcp://127.0.0.1:1", workers=2)
    with pytest.raises(InvalidArgument, match="seed"):
        estimate_delta(SCHEME, [1.0], BOTH, 10, seed=-1)
