"""Benchmark: exact remove-direction RDP of Gaussian random allocation, all orders at once.

verifier computes α!·[x^α](Σ_j m_j x^j/(j! t^j))^t for every α <= α_max in one pass of the
log-domain series kernel (src/fast/rdp_series.pyx); random-allocation 1.0.5 enumerates the integer
partitions of each α (Feldman & Shenfeld, Thm 4.8), which limits it to moderate α.

random-allocation pins its own numpy, so it lives in a separate virtual environment and is called
through a subprocess (never installed into .venv):

    python3 -m venv .venv-random-allocation && .venv-random-allocation/bin/pip install random-allocation==1.0.5
    .venv/bin/python benchmarks/rdp_allocation.py [--ra-python .venv-random-allocation/bin/python]

Prints, for each case, verifier's time for all orders 2…α_max, the peer's time for orders 2…α_peer,
the ratio on the common orders, and the largest relative difference of the values.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from verifier._types import Direction
from verifier.pairs import Gaussian
from verifier.rdp import allocation_curve
from verifier.rdp.moments import clear_memo

#: (σ, t, largest order for the peer): the issue's target (t = 10⁶) and its slow case (σ = 5, t = 100).
CASES = [(1.0, 10**6, 40), (5.0, 100, 40), (0.5, 1000, 30)]
ALPHA_MAX = 256
REPEATS = 20

_PEER = """
import json, sys, time
from random_allocation.random_allocation_scheme.direct import allocation_RDP_remove
sigma, t, top = float(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
allocation_RDP_remove(2, sigma, t)  # warm up numba's JIT
start = time.perf_counter()
values = [allocation_RDP_remove(a, sigma, t) for a in range(2, top + 1)]
print(json.dumps({"seconds": time.perf_counter() - start, "values": values}))
"""


def _ours(sigma: float, t: int, top: int) -> tuple[float, np.ndarray]:
    """Median wall time of the whole call (moments D_j of the pair included: the memo is cleared)."""
    pair = Gaussian(sigma)
    allocation_curve(pair, t, range(2, top + 1), Direction.REMOVE)  # warm up imports
    times = []
    for _ in range(REPEATS):
        clear_memo()
        start = time.perf_counter()
        curve = allocation_curve(pair, t, range(2, top + 1), Direction.REMOVE)
        times.append(time.perf_counter() - start)
    return float(np.median(times)), curve.values


def _peer(python: str, sigma: float, t: int, top: int) -> dict | None:
    if not Path(python).exists():
        return None
    done = subprocess.run([python, "-c", _PEER, str(sigma), str(t), str(top)], capture_output=True, text=True, timeout=3600)
    if done.returncode != 0:
        print(f"  peer failed: {done.stderr.strip().splitlines()[-1] if done.stderr else done.returncode}")
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--ra-python",
        default=str(Path(__file__).resolve().parents[1] / ".venv-random-allocation" / "bin" / "python"),
        help="python of the random-allocation venv (it pins an old numpy, so it lives apart from .venv)",
    )
    args = parser.parse_args()
    for sigma, t, peer_top in CASES:
        seconds_all, values = _ours(sigma, t, ALPHA_MAX)
        seconds_common, _ = _ours(sigma, t, peer_top)
        print(f"sigma={sigma:g} t={t:g}: verifier orders 2..{ALPHA_MAX} in {1e3 * seconds_all:.2f} ms (median of {REPEATS})")
        peer = _peer(args.ra_python, sigma, t, peer_top)
        if peer is None:
            print(f"  random-allocation not available at {args.ra_python}; see the module docstring")
            continue
        ref = np.array(peer["values"])
        rel = np.max(np.abs(values[: len(ref)] - ref) / np.abs(ref))
        print(
            f"  orders 2..{peer_top}: random-allocation {peer['seconds']:.3f} s, verifier {1e3 * seconds_common:.2f} ms, "
            f"ratio {peer['seconds'] / seconds_common:.0f}x; max relative difference {rel:.1e}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
