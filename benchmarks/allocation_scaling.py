"""Random allocation at ε ≈ 1 (small σ), t = 10³ … 10⁷: how verifier's allocation-pld time grows
with t, beside pld-accounting's, in one run (issue 17).

    .venv/bin/python benchmarks/allocation_scaling.py [--peer-python PATH] [--before-src DIR] [--out FILE.md]

One row per t, σ chosen so that ε(δ = 1e-6) is about 1 (where the sums of the heavy-tailed privacy
ratios concentrate slowly). verifier runs as a whole process, ``python -m verifier epsilon --scheme
allocation ... --method allocation-pld --json`` (ε for add-or-remove, both directions); the peer
(pld-accounting's ``gaussian_allocation_epsilon_range``) as a process of ``--peer-python`` that
imports it, warms its JIT up on a tiny case and times one call. ``--before-src`` names a source tree
of an earlier commit with its kernels built (``setup.py build_ext --inplace``): its rows run the same
command with that tree first on ``PYTHONPATH`` (the "before" columns). Process timing, byte
compilation and the machine line are those of ``benchmarks/production.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterator

from allocation_pld import _PEER
from production import _compile_verifier, _cpu_model, _seconds, _strip, run_process, run_verifier

DELTA = 1e-6
ROWS = [(10**3, 0.70), (10**4, 0.55), (10**5, 0.46), (10**6, 0.40), (10**7, 0.36)]


def _args(t: int, sigma: float, every_method: bool = False) -> tuple[str, ...]:
    args = ("epsilon", "--scheme", "allocation", "--sigma", repr(sigma), "--steps", str(t), "--delta", repr(DELTA))
    return args if every_method else (*args, "--method", "allocation-pld")


@contextmanager
def _source_on_path(source: Path | None) -> Iterator[None]:
    """Child processes import ``source``'s verifier (an earlier tree) while inside; no change for None."""
    if source is None:
        yield
        return
    saved = dict(os.environ)
    os.environ["PYTHONPATH"] = str(source)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def _every_method(t: int, sigma: float, timeout: float, source: Path | None = None, label: str = "") -> str:
    """One line: the default ``verifier epsilon`` (every applicable method) on this row, whole-process
    times and the methods' own times (both directions summed), slowest first; with ``source``, that
    tree's verifier (the line is marked ``label``)."""
    with _source_on_path(source):
        got = run_process([sys.executable, "-m", "verifier", *_args(t, sigma, every_method=True), "--json"], timeout)
    head = f"- t = {t}, σ = {sigma:g}" + (f" ({label})" if label else "")
    if "timeout" in got or got["rc"] not in (0, 1, 3):
        return f"{head}: no answer ({_seconds(got, 'wall')} s)"
    seconds: dict[str, float] = {}
    for bound in json.loads(got["stdout"])["bounds"]:
        key = (bound["method"], bound["direction"])
        seconds[key] = bound.get("seconds") or 0.0  # both sides of one (method, direction) share a time
    per_method: dict[str, float] = {}
    for (method, _), value in seconds.items():
        per_method[method] = per_method.get(method, 0.0) + value
    slowest = ", ".join(f"{m} {v:.2f}" for m, v in sorted(per_method.items(), key=lambda kv: -kv[1]))
    return f"{head}: wall {got['wall']:.2f} s, CPU {got['cpu']:.2f} s; methods (s): {slowest}"


def _verifier(t: int, sigma: float, timeout: float, source: Path | None) -> dict:
    with _source_on_path(source):
        return run_verifier(_args(t, sigma), timeout)


def _peer(python: str, t: int, sigma: float, timeout: float) -> dict:
    got = run_process([python, "-c", _PEER, json.dumps([sigma, t, 1, 1, DELTA])], timeout)
    if "timeout" not in got and got["rc"] == 0:
        got.update(json.loads(got["stdout"].strip().splitlines()[-1]))
    return got


def _bracket(result: dict) -> str:
    if "lower" not in result:
        return f"(no answer in {result['timeout']:.0f} s) | —" if "timeout" in result else "— | —"
    width = (result["upper"] - result["lower"]) / result["upper"]
    return f"[{result['lower']:.5f}, {result['upper']:.5f}] | {100 * width:.3f}%"


def _times(result: dict, inner: str) -> str:
    """Whole process wall / whole process CPU / in-process compute, seconds."""
    return f"{_seconds(result, 'wall')} / {_seconds(result, 'cpu')} / {_seconds(result, inner)}"


def _row(t: int, sigma: float, ours: dict, before: dict | None, peer: dict) -> str:
    cells = [f"10^{len(str(t)) - 1}", f"{sigma:g}", _bracket(ours), _times(ours, "inner")]
    if before is not None:
        width = f"{100 * (before['upper'] - before['lower']) / before['upper']:.3f}%" if "lower" in before else "—"
        cells.append(f"{_times(before, 'inner')} ({width})")
    cells.append(_bracket(peer))
    cells.append(_times(peer, "seconds"))
    inside = "—"
    if "lower" in ours and "lower" in peer:
        inside = "yes" if peer["lower"] <= ours["lower"] and ours["upper"] <= peer["upper"] else "NO"
    ratio = f"{ours['inner'] / peer['seconds']:.3f}×" if "inner" in ours and "seconds" in peer else "—"
    return "| " + " | ".join(cells + [ratio, inside]) + " |"


def _growth(results: list[dict], key: str) -> str:
    """Time ratio of each decade of t to the one before (a '—' where either is missing)."""
    out = []
    for lo, hi in zip(results, results[1:]):
        out.append(f"{hi[key] / lo[key]:.1f}×" if key in lo and key in hi and lo[key] > 0 else "—")
    return ", ".join(out)


_EVERY_HEAD = "The default `verifier epsilon` (every applicable method, no `--method`) on the same rows"


def _machine() -> str:
    return f"{_cpu_model()} ({platform.machine()}), Linux {platform.release()}, {len(os.sched_getaffinity(0))} cores"


def _every_lines(args: argparse.Namespace) -> list[str]:
    every = [int(t) for t in args.every_method_at.split(",") if t]
    lines = []
    for t, sigma in ROWS:
        if t in every and t <= args.max_t:
            lines.append(_every_method(t, sigma, args.timeout))
            if args.before_src:
                lines.append(_every_method(t, sigma, args.timeout, args.before_src, args.before_label))
            print(*lines[-2 if args.before_src else -1:], sep="\n", flush=True)
    return lines


def _rerun_every_method(args: argparse.Namespace) -> None:
    """Replace the default-run section of ``args.out`` (the table above it is kept as it was)."""
    text = args.out.read_text().split("\n")
    keep = next((i for i, line in enumerate(text) if line.startswith(_EVERY_HEAD)), len(text))
    now = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    head = f"{_EVERY_HEAD} (rerun alone on {now}, {_machine()}):"
    body = text[:keep] if keep < len(text) else [*text, ""]
    args.out.write_text("\n".join([*body, head, *_every_lines(args)]) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peer-python", default=sys.executable)
    parser.add_argument("--peer-timeout", type=float, default=300.0)
    parser.add_argument("--before-src", type=Path, default=None)
    parser.add_argument("--before-label", default="before")
    parser.add_argument("--timeout", type=float, default=120.0, help="per verifier process, seconds")
    parser.add_argument("--max-t", type=int, default=ROWS[-1][0], help="skip the rows above this t")
    parser.add_argument("--every-method-at", default="100000,1000000", help="rows (t) also run with every method")
    parser.add_argument("--every-method-only", action="store_true",
                        help="rerun only the default-run lines (and --before-src's) and replace that section of --out")
    parser.add_argument("--out", type=Path, default=Path(__file__).with_suffix(".md"))
    args = parser.parse_args()
    _compile_verifier()
    if args.every_method_only:
        _rerun_every_method(args)
        return
    lines, raw, ours_all, before_all, peer_all = [], [], [], [], []
    for t, sigma in (row for row in ROWS if row[0] <= args.max_t):
        ours = _verifier(t, sigma, args.timeout, None)
        before = _verifier(t, sigma, args.timeout, args.before_src) if args.before_src else None
        peer = _peer(args.peer_python, t, sigma, args.peer_timeout)
        ours_all.append(ours)
        before_all.append(before or {})
        peer_all.append(peer)
        lines.append(_row(t, sigma, ours, before, peer))
        raw.append({"t": t, "sigma": sigma, "verifier": _strip(ours), "before": _strip(before), "peer": _strip(peer)})
        print(lines[-1], flush=True)
    every_lines = _every_lines(args)
    args.out.with_suffix(".json").write_text(json.dumps(raw, indent=1, default=str) + "\n")
    now = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    machine = _machine()
    before_head = f" {args.before_label}: s (width) |" if args.before_src else ""
    text = [
        "# Random allocation at ε ≈ 1 (small σ): time against t (issue 17)\n",
        f"Generated by `benchmarks/allocation_scaling.py` on {now}, {machine}, Python {platform.python_version()}, one run;",
        f"δ = {DELTA:g}, ε for add-or-remove (both directions), one epoch, k = 1.\n",
        "Seconds: whole process wall / whole process CPU (user + sys) / in-process compute (verifier: the `seconds`",
        "of its bounds, both directions; the peer: its call after its imports and a JIT warm-up on a tiny case).",
        "The machine is shared (2 cores for several agents): wall times include waiting for a core.\n",
        f"| t | σ | verifier ε bracket | width | verifier s |{before_head} pld-accounting ε bracket | width "
        "| peer s | in-process ratio | verifier inside peer |",
        "|---" * (11 if args.before_src else 10) + "|",
        *lines,
        "",
        f"Growth per decade of t, in-process: verifier {_growth(ours_all, 'inner')}"
        + (f"; {args.before_label} {_growth(before_all, 'inner')}" if args.before_src else "")
        + f"; pld-accounting {_growth(peer_all, 'seconds')}.",
        f"Whole-process CPU: verifier {_growth(ours_all, 'cpu')}"
        + (f"; {args.before_label} {_growth(before_all, 'cpu')}" if args.before_src else "")
        + f"; pld-accounting {_growth(peer_all, 'cpu')}.",
    ]
    if every_lines:
        text += ["", f"{_EVERY_HEAD}:", *every_lines]
    args.out.write_text("\n".join(text) + "\n")


if __name__ == "__main__":
    main()
