"""Fixed-size batches: what the finite Gram cover of verifier.pld.gram_cover costs a Bellman
recursion, measured in FLOAT (a planning experiment, NOT a bound: scipy FFT, float loss laws of
benchmarks/fixed_batch_cells.py, h = 2^-9).

    .venv/bin/python benchmarks/fixed_batch_cover.py [--out FILE.md] [--quick]

For each row (σ, q, T, δ = 1e-5): ε of the recursion over remove (4, 0, 0) and add (0, 4, 0) alone,
then over remove/add plus every member of gram_cover(σ, excess) (the rigorous cover: check_cover
passes), for two planning budgets. Then, at the DP-SGD row, single members (with their mirrors) beside
their excess of the second-order proxy D = e^{A/σ²} + e^{B/σ²} − 2e^{C/σ²} over remove's: the check of
the proxy that plans the cover.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fixed_batch_cells import epsilon, finish, loss_law  # noqa: E402

from verifier.pld.gram_cover import check_cover, gram_cover  # noqa: E402

DELTA = 1e-5
ROWS = [(1.1, 256 / 60000, 2344), (2.0, 0.01, 1000), (4.0, 0.1, 100)]
BUDGETS = (0.01, 0.03)
PROXY_MEMBERS = [(4.0, 4.0, 2.8), (4.0, 2.0, 1.0), (4.0, 1.0, 0.45), (4.0, 0.5, 0.2), (3.5, 2.0, -1.0), (2.5, 2.5, -2.5)]


def _family_eps(members, sigma: float, q: float, steps: int, base: list) -> float:
    laws = base + [loss_law(m.a_sq, m.b_sq, m.c, sigma, q) for m in members]
    return epsilon(laws, steps, DELTA)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path)
    parser.add_argument("--quick", action="store_true", help="the DP-SGD row only")
    args = parser.parse_args()
    start_wall, start_cpu = time.time(), time.process_time()
    lines = [
        "Float recursion (NOT a bound), h = 2^-9, δ = 1e-5. Members: the rigorous cover of",
        "verifier.pld.gram_cover (check_cover passes) at planning budget `excess` (members' D <= (1 + excess)·D_r).",
        "",
        "| σ | q | T | family | members | ε | over remove/add |",
        "|---|---|---|---|---|---|---|",
    ]
    for sigma, q, steps in ROWS[:1] if args.quick else ROWS:
        base = [loss_law(4.0, 0.0, 0.0, sigma, q), loss_law(0.0, 4.0, 0.0, sigma, q)]
        eps0 = epsilon(base, steps, DELTA)
        lines.append(f"| {sigma} | {q:.6g} | {steps} | remove/add | 2 | {eps0:.5f} | |")
        print(lines[-1], flush=True)
        for excess in BUDGETS:
            try:
                cover = gram_cover(sigma, excess=excess)
                check_cover(cover)
            except Exception as error:  # noqa: BLE001 (recorded in the table)
                lines.append(f"| {sigma} | {q:.6g} | {steps} | cover, excess {excess} | - | {type(error).__name__}: {error} | |")
                continue
            eps = _family_eps(cover.members, sigma, q, steps, base)
            lines.append(f"| {sigma} | {q:.6g} | {steps} | cover, excess {excess} | {len(cover.members)} + 2 | {eps:.5f} | {eps - eps0:+.5f} |")
            print(lines[-1], flush=True)
    sigma, q, steps = ROWS[0]
    s2 = sigma * sigma
    base = [loss_law(4.0, 0.0, 0.0, sigma, q), loss_law(0.0, 4.0, 0.0, sigma, q)]
    eps0 = epsilon(base, steps, DELTA)
    lines += ["", "Proxy check, DP-SGD row: remove/add plus one member and its mirror.", "", "| member (A, B, C) | D − D_r | ε increase |", "|---|---|---|"]
    for a_sq, b_sq, c in PROXY_MEMBERS:
        excess_d = math.exp(a_sq / s2) + math.exp(b_sq / s2) - 2 * math.exp(c / s2) - math.expm1(4 / s2)
        eps = epsilon(base + [loss_law(a_sq, b_sq, c, sigma, q), loss_law(b_sq, a_sq, c, sigma, q)], steps, DELTA)
        lines.append(f"| ({a_sq}, {b_sq}, {c}) | {excess_d:+.3f} | {eps - eps0:+.5f} |")
        print(lines[-1], flush=True)
    finish(lines, args.out, start_wall, start_cpu)


if __name__ == "__main__":
    main()
