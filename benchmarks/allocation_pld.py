"""Random-allocation ε(δ) brackets: verifier's allocation-pld method against pld-accounting 2.0's
``gaussian_allocation_epsilon_range``, side by side in one run on the same machine.

Usage (from the repository root)::

    .venv/bin/python benchmarks/allocation_pld.py [--peer-python PATH] [--peer-timeout S] [--out FILE]

pld-accounting pins dependencies of its own, so it may live in another environment: the peer runs
as a subprocess of ``--peer-python`` (default: this interpreter), one configuration per process,
JIT warm-up excluded by a first call on a tiny configuration in the same process. Prints one row per
configuration (ε bracket for add-or-remove = the maximum over both directions, its relative width,
the time of each tool and their ratio) and writes the table as Markdown to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from verifier._types import Direction
from verifier.certify.methods.allocation_pld import AllocationPLD
from verifier.pairs import Gaussian
from verifier.pld import allocation as allocation_module
from verifier.schemes import Allocation

CONFIGS = [(sigma, t, 1, 1, 1e-6) for sigma in (0.5, 1.0, 2.0, 5.0) for t in (10, 100, 1000)]
CONFIGS += [(1.0, 1000, 10, 1, 1e-8), (2.0, 10**6, 1, 1, 1e-10)]

_PEER = """
import json, sys, time
from PLD_accounting import gaussian_allocation_epsilon_range
sigma, t, k, epochs, delta = json.loads(sys.argv[1])
gaussian_allocation_epsilon_range(delta=1e-3, sigma=1.0, num_steps=2)  # JIT warm-up
start = time.perf_counter()
upper, lower = gaussian_allocation_epsilon_range(delta=delta, sigma=sigma, num_steps=t, num_selected=k, num_epochs=epochs)
print(json.dumps({"lower": lower, "upper": upper, "seconds": time.perf_counter() - start}))
"""


def ours(sigma: float, t: int, k: int, epochs: int, delta: float) -> dict:
    allocation_module._convex_cached.cache_clear()  # time a cold computation
    method = AllocationPLD()
    scheme = Allocation(Gaussian(sigma), t, k=k, epochs=epochs)
    start = time.perf_counter()
    bounds = [method.epsilon_bounds(scheme, delta, d) for d in Direction]
    seconds = time.perf_counter() - start
    lower = max(b.value for pair in bounds for b in pair if b.side.value == "lower")
    upper = max(b.value for pair in bounds for b in pair if b.side.value == "upper")
    return {"lower": lower, "upper": upper, "seconds": seconds}


def peer(python: str, config: tuple, timeout: float) -> dict | None:
    try:
        done = subprocess.run([python, "-c", _PEER, json.dumps(config)], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"timeout": timeout}
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit {done.returncode}"}
    return json.loads(done.stdout.strip().splitlines()[-1])


def _width(result: dict) -> float:
    return (result["upper"] - result["lower"]) / result["upper"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peer-python", default=sys.executable)
    parser.add_argument("--peer-timeout", type=float, default=600.0)
    parser.add_argument("--out", type=Path, default=Path(__file__).with_suffix(".md"))
    parser.add_argument("--skip-peer", action="store_true")
    args = parser.parse_args()
    header = (
        "| σ | t | k | δ | verifier ε bracket | width | time (s) | pld-accounting ε bracket | width | time (s) "
        "| time ratio | ours inside theirs (1% slack) |"
    )
    rows = [header, "|" + "---|" * 12]
    print(header)
    for config in CONFIGS:
        sigma, t, k, epochs, delta = config
        mine = ours(*config)
        theirs = None if args.skip_peer else peer(args.peer_python, config, args.peer_timeout)
        cells = [f"{sigma:g}", f"{t}", f"{k}", f"{delta:g}",
                 f"[{mine['lower']:.6g}, {mine['upper']:.6g}]", f"{_width(mine):.2%}", f"{mine['seconds']:.2f}"]  # fmt: skip
        if theirs and "upper" in theirs:
            inside = mine["lower"] >= theirs["lower"] * 0.99 and mine["upper"] <= theirs["upper"] * 1.01
            overlap = mine["lower"] <= theirs["upper"] and theirs["lower"] <= mine["upper"]
            cells += [f"[{theirs['lower']:.6g}, {theirs['upper']:.6g}]", f"{_width(theirs):.2%}", f"{theirs['seconds']:.2f}",
                      f"{theirs['seconds'] / mine['seconds']:.1f}x", "yes" if inside else ("overlap" if overlap else "NO")]  # fmt: skip
        else:
            reason = "not run" if theirs is None else (f"timeout {theirs['timeout']:.0f} s" if "timeout" in theirs else theirs["error"])
            cells += [reason, "", "", "", ""]
        row = "| " + " | ".join(cells) + " |"
        rows.append(row)
        print(row, flush=True)
    args.out.write_text(
        "# Random allocation ε(δ): verifier allocation-pld vs pld-accounting 2.0\n\n"
        "Generated by `benchmarks/allocation_pld.py` (one run, same machine; add-or-remove = max over "
        "directions; pld-accounting timed after a JIT warm-up, numba installed).\n\n" + "\n".join(rows) + "\n"
    )


if __name__ == "__main__":
    main()
