"""The shuffle model for binary randomized response: verifier's rigorous bracket on ε(δ) beside
Feldman, McMillan & Talwar's numbers and Wang et al.'s, for ε0 ∈ {0.5, 1, 2, 4}, n ∈ {10² … 10⁶},
δ = 1e-6 (issues 27 and 38).

    PYTHONPATH=src .venv/bin/python benchmarks/shuffle.py [--peers DIR] [--out FILE.md]
    PYTHONPATH=src .venv/bin/python benchmarks/shuffle.py --exact-only [--out FILE.md]
    PYTHONPATH=src .venv/bin/python benchmarks/shuffle.py --laplace-only [--out FILE.md]
    PYTHONPATH=src .venv/bin/python benchmarks/shuffle.py --kary-only [--out FILE.md]
    PYTHONPATH=src .venv/bin/python benchmarks/shuffle.py --gaussian-only [--out FILE.md]

verifier's columns: EXACT = the worst case over every dataset pair (shuffle-rr-exact: the scan of
every background for n <= 15000, exact backgrounds and ranges of backgrounds beyond), LOWER = the exact ε(δ) of shuffled RR on (1, 0, …, 0) vs (0, …, 0) through the count of
ones (both orders, the larger), UPPER = the clone reduction summed in ball arithmetic with
randomized response's clone share 2/(e^ε0 + 1) (what shuffle-clones uses now) and with FMT's
e^−ε0 (issue 27's column), and FMT's Thm 3.1 closed form (as quoted, and verifier's reading: the
stricter ln(4/δ) condition and the larger factor; "—" where the condition fails and the method
declines).

Peers (``--peers DIR`` holding computeamplification.py from apple/ml-shuffling-amplification and
unifiedamplification.py from wangsw/PrivacyAmplification, run unmodified; no peer code is in this
repository): FMT's ``numericalanalysis`` (their lower and upper numerical bounds of the clone pair,
10 bisection steps, step = 100 as in their example.py) and Wang et al.'s ``amplificationUB`` /
``amplificationLB`` with the binary-RR parameters of their README (p = q = e^ε0,
β = (e^ε0 − 1)/(e^ε0 + 1)), T = 20 bisection steps. Wall-clock seconds per cell are reported with
the machine's load average; they are not a speed claim (the peers run float64, verifier balls).

``--exact-only`` recomputes only the EXACT and CPU s cells of the rows with n > 15000 in an existing
table (FILE.md, this script's output), leaving every other cell (the peers' among them) as it is;
``--laplace-only`` recomputes only the Laplace table in it (no peer code is involved there), and
``--kary-only`` only the k-ary randomized response table (issue 38, Done-when 2), ``--gaussian-only``
only the Gaussian table (issue 38, Done-when 3).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

from verifier._types import Bracket, Direction
from verifier.errors import NotApplicable
from verifier.shuffle.binary import SCAN_LIMIT, BinaryShuffle
from verifier.shuffle.blanket import BlanketBound
from verifier.shuffle.clone_sum import laplace_shuffle_epsilon_upper
from verifier.shuffle.clones import (
    CloneWeight,
    clone_epsilon_upper,
    closed_form_condition,
    fmt_closed_form,
    fmt_closed_form_printed,
)
from verifier.shuffle.count import CountPair, rr_count_pair
from verifier.shuffle.histogram import (
    THREE_SYMBOL_LIMIT,
    ThreeSymbolBackgrounds,
    three_symbol_work,
)
from verifier.shuffle.kary_search import KarySearch
from verifier.shuffle.one_symbol import OneSymbolPair
from verifier.shuffle.ranges import BinaryRanges

EPS0 = (0.5, 1.0, 2.0, 4.0)
USERS = (10**2, 10**3, 10**4, 10**5, 10**6)
DELTA = 1e-6


def count_lower(e0: float, k: int, n: int) -> float:
    """shuffle-rr-count's ε(δ) LOWER for k-ary randomized response: the count of one symbol, both orders, the larger."""
    forward = rr_count_pair(e0, k, n)
    backward = CountPair(forward.a0, forward.a1, forward.r, forward.others)
    return max(forward.epsilon_lower(DELTA, e0), backward.epsilon_lower(DELTA, e0))


def ours(e0: float, n: int) -> dict:
    start = time.perf_counter()
    lower = count_lower(e0, 2, n)
    t_lower = time.perf_counter() - start
    start = time.perf_counter()
    upper = clone_epsilon_upper(e0, n, DELTA, CloneWeight.TAILED)
    t_upper = time.perf_counter() - start
    fmt_share = clone_epsilon_upper(e0, n, DELTA)
    exact, t_exact = exact_cell(e0, n)
    try:
        closed = fmt_closed_form(e0, n, DELTA)
    except NotApplicable:
        closed = math.nan
    return {
        "lower": lower, "upper": upper, "fmt_share": fmt_share, "exact": exact, "t_exact": t_exact, "closed": closed,
        "printed": fmt_closed_form_printed(e0, n, DELTA), "regime": closed_form_condition(e0, n, DELTA) is None,
        "t_lower": t_lower, "t_upper": t_upper,
    }


def exact_cell(e0: float, n: int) -> tuple[Bracket, float]:
    """shuffle-rr-exact's ε(δ) bracket and its CPU seconds (the scan, or the ranges beyond SCAN_LIMIT)."""
    start = time.process_time()
    exact = BinaryShuffle(e0, n).epsilon(DELTA) if n <= SCAN_LIMIT else BinaryRanges(e0, n).epsilon(DELTA)
    return exact, time.process_time() - start


def _exact_text(exact: Bracket, seconds: float) -> str:
    return f"[{exact.lower:.8g}, {exact.upper:.8g}] | {seconds:.2f}"


def patch_exact(path: Path) -> None:
    """Rewrite the EXACT and CPU s cells of the rows with n > SCAN_LIMIT in the first table at ``path``
    (binary randomized response; the Laplace table below it is left alone)."""
    lines = path.read_text().splitlines()
    for i, line in enumerate(lines):
        if line.startswith("Laplace randomizer"):
            break
        cells = line.split(" | ")
        if not line.startswith("| ") or len(cells) < 5:
            continue
        try:
            e0, n = float(cells[0][2:]), int(float(cells[1]))
        except ValueError:
            continue
        if n > SCAN_LIMIT and e0 in EPS0:
            cells[2:4] = _exact_text(*exact_cell(e0, n)).split(" | ")
            lines[i] = " | ".join(cells)
            print(lines[i], flush=True)
    path.write_text("\n".join(lines) + "\n")


def peers(e0: float, n: int, directory: Path) -> dict:
    sys.path.insert(0, str(directory))
    import computeamplification as fmt
    import unifiedamplification as wang

    start = time.perf_counter()
    f_lo = fmt.numericalanalysis(n, e0, DELTA, 10, 100, False)
    f_hi = fmt.numericalanalysis(n, e0, DELTA, 10, 100, True)
    t_fmt = time.perf_counter() - start
    p = math.exp(e0)
    beta = (p - 1) / (p + 1)
    start = time.perf_counter()
    w_hi = wang.amplificationUB(p, beta, p, p, n, DELTA, 20)
    w_lo = wang.amplificationLB(p, beta, p, p, n, DELTA, 20)
    t_wang = time.perf_counter() - start
    return {"fmt_lo": f_lo, "fmt_hi": f_hi, "wang_lo": w_lo, "wang_hi": w_hi, "t_fmt": t_fmt, "t_wang": t_wang}


def laplace_rows() -> list[str]:
    """The Laplace randomizer (inputs in an interval of length Δ, scale b, ε0 = Δ/b): ε(δ) UPPER from
    the clone reduction with FMT's share e^−ε0 (issue 27), with the share of the changed inputs'
    distance over ranges (shuffle-clones), and keeping the clones' reports (shuffle-clone-sum), with
    the CPU seconds of the last."""
    rows = ["| ε0 | n | clones, FMT's share e^−ε0 | clones, distance share | lower by | clone sum (shuffle-clone-sum) | lower by | CPU s |",
            "|---|---|---|---|---|---|---|---|"]
    for e0 in (1.0, 2.0, 4.0):
        for n in (10**3, 10**4, 10**5, 10**6):
            fmt_share = clone_epsilon_upper(e0, n, DELTA)
            distance = clone_epsilon_upper(e0, n, DELTA, CloneWeight.DISTANCE)
            start = time.process_time()
            clone_sum = laplace_shuffle_epsilon_upper(e0, n, DELTA)
            seconds = time.process_time() - start
            rows.append(f"| {e0:g} | {n:.0e} | {fmt_share:.4g} | {distance:.4g} | {100 * (1 - distance / fmt_share):.1f}% "
                        f"| {clone_sum:.4g} | {100 * (1 - clone_sum / fmt_share):.1f}% | {seconds:.1f} |")
            print(rows[-1], flush=True)
    return rows


#: The small ε0 of the k-ary table's rows at k = 10, n <= 20.
SMALL_EPS0 = (0.1, 0.15, 0.2, 0.25, 0.3)


def kary_rows() -> list[str]:
    """k-ary randomized response (k ∈ {3, 4, 10}, n ∈ {10², 10³, 10⁴}, and k = 10 at n ∈ {8, 12, 16, 20},
    beyond its exact enumeration; ε0 ∈ {0.5, 1, 2}, and ε0 ∈ :data:`SMALL_EPS0` for k = 10, n <= 20): ε(δ) LOWER from shuffle-rr-one-symbol (every other user
    on a third symbol, or on the changed user's first symbol, both orders; for n <= 27 every background
    on at most three symbols too) and UPPER from the blanket (shuffle-rr-blanket), their width relative
    to the lower end and CPU seconds, beside the count of one symbol (shuffle-rr-count, both orders) and
    the clone bound with randomized response's share (shuffle-clones, any k); for n <= 20 also the exact
    worst case of shuffle-rr-exact's background search (its lower end, the width of its bracket relative
    to it, CPU seconds)."""
    rows = [("| ε0 | k | n | count LOWER | clone UPPER (any k) | one-symbol LOWER | worst pair | blanket UPPER | width | CPU s (lower / upper) "
             "| exact (search) | its width | CPU s |"),
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    cells = [(k, n) for k in (3, 4, 10) for n in ((8, 12, 16, 20) if k == 10 else ()) + (10**2, 10**3, 10**4)]
    small = [(10, n) for n in (8, 12, 16, 20)]  # small ε0: where the search's partial blanket prunes little
    for e0, chosen in [(e0, small) for e0 in SMALL_EPS0] + [(e0, cells) for e0 in (0.5, 1.0, 2.0)]:
        for k, n in chosen:
            count = count_lower(e0, k, n)
            clone = clone_epsilon_upper(e0, n, DELTA, CloneWeight.TAILED)
            start = time.process_time()
            found = [(OneSymbolPair(e0, k, n, held).epsilon_lower(DELTA), "third symbol" if held == "z" else "x") for held in ("z", "x")]
            if three_symbol_work(n) <= THREE_SYMBOL_LIMIT:
                family = ThreeSymbolBackgrounds(e0, k, n)
                lower = family.epsilon(DELTA).lower
                counts, order = family.worst(lower).split("inputs (")[1].split("), ")
                found.append((lower, f"({', '.join(counts.split(', ')[:3])}) on (x, x′, z), {order}"))
            lower, where = max(found)
            t_lower = time.process_time() - start
            start = time.process_time()
            upper = BlanketBound(e0, k, n).epsilon_upper(DELTA)
            t_upper = time.process_time() - start
            width = upper / lower - 1
            exact = "— | — | —"
            if n <= 20:
                start = time.process_time()
                found_exact = KarySearch(e0, k, n).epsilon(DELTA)
                exact = f"{found_exact.lower:.7g} | {found_exact.upper / found_exact.lower - 1:.1e} | {time.process_time() - start:.1f}"
            rows.append(f"| {e0:g} | {k} | {n if n < 100 else f'{n:.0e}'} | {count:.4g} | {clone:.4g} | {lower:.6g} | {where} | {upper:.6g} "
                        f"| {f'{100 * width:.2f}%' if width >= 1e-4 else f'{width:.1e}'} | {t_lower:.1f} / {t_upper:.1f} | {exact} |")
            print(rows[-1], flush=True)
    return rows


#: (σ, n) of the Gaussian table: records in [−1, 1] (sensitivity 1 under replace-one), reports of dimension 1.
GAUSSIAN_CELLS = tuple((sigma, n) for sigma in (1.0, 3.0) for n in (10**3, 10**4, 10**5, 10**6))
#: Cells not run (none: beyond 10⁵ users the blanket is bounded at USERS_CAP = 10⁵, its step 5).
GAUSSIAN_SKIP: set[tuple[float, int]] = set()


def gaussian_rows() -> list[str]:
    """The Gaussian randomizer (records in [−1, 1], noise σ, one-dimensional reports; replace-one, so
    the step's pair has sensitivity 2): ε(δ) UPPER from the clone bound through FMT's coupling
    (shuffle-clones, what the bracket had), from the privacy blanket (shuffle-gaussian-blanket) with
    its CPU seconds, and LOWER from Liew et al.'s pair (checkin-lower)."""
    from verifier.certify.methods.checkin import CheckInLower
    from verifier.certify.methods.shuffle import ShuffleGaussianBlanket
    from verifier.pairs import Gaussian
    from verifier.schemes import Shuffle
    from verifier.shuffle.approx import shuffle_epsilon_upper

    rows = ["| σ | n | clones + coupling UPPER | blanket UPPER | lower by | checkin-lower LOWER | blanket / lower | CPU s (blanket) |",
            "|---|---|---|---|---|---|---|---|"]
    for sigma, n in GAUSSIAN_CELLS:
        scheme = Shuffle(Gaussian(sigma, 2.0), n, dimension=1)
        clone = shuffle_epsilon_upper(scheme.pair, n, DELTA)[0]
        lower = max(b.value for d in (Direction.ADD, Direction.REMOVE) for b in CheckInLower().epsilon_bounds(scheme, DELTA, d))
        if (sigma, n) in GAUSSIAN_SKIP:
            rows.append(f"| {sigma:g} | {n:.0e} | {clone:.4g} | not run | — | {lower:.4g} | — | — |")
        else:
            start = time.process_time()
            try:
                upper = ShuffleGaussianBlanket().epsilon_bounds(scheme, DELTA, Direction.REMOVE)[0].value
            except NotApplicable as exc:
                rows.append(f"| {sigma:g} | {n:.0e} | {clone:.4g} | declines ({exc}) | — | {lower:.4g} | — | {time.process_time() - start:.1f} |")
                print(rows[-1], flush=True)
                continue
            seconds = time.process_time() - start
            rows.append(f"| {sigma:g} | {n:.0e} | {clone:.4g} | {upper:.4g} | {100 * (1 - upper / clone):.1f}% | {lower:.4g} "
                        f"| {upper / lower:.3g} | {seconds:.1f} |")
        print(rows[-1], flush=True)
    return rows


#: The tables below the binary one, in page order: the switch that recomputes only that one, its title
#: line (a page's title may say more after it) and what computes its rows.
TABLES = (
    ("--laplace-only", "Laplace randomizer, δ = 1e-6:", laplace_rows),
    ("--kary-only", "k-ary randomized response, δ = 1e-6:", kary_rows),
    ("--gaussian-only", "Gaussian randomizer (one-dimensional reports), δ = 1e-6:", gaussian_rows),
)


def patch_table(path: Path, title: str, rows: Callable[[], list[str]]) -> None:
    """Replace the table after the line that starts as ``title`` does (up to its comma) at ``path`` by
    ``rows()``, or add it at the end of the tables, leaving the rest of the page as it is."""
    lines = path.read_text().splitlines()
    heads = [i for i, line in enumerate(lines) if line.startswith(title.split(",")[0])]
    if heads:
        start = next(i for i in range(heads[0] + 1, len(lines)) if lines[i].startswith("|"))
        end = next((i for i in range(start, len(lines)) if not lines[i].startswith("|")), len(lines))
        lines[start:end] = rows()
    else:
        at = next(i for i, line in enumerate(lines) if line.startswith("δ = "))
        lines[at:at] = [title, "", *rows(), ""]
    path.write_text("\n".join(lines) + "\n")


def _f(x: float) -> str:
    return "—" if math.isnan(x) else f"{x:.4g}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peers", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=Path(__file__).with_suffix(".md"))
    parser.add_argument("--exact-only", action="store_true")
    for switch, _, _ in TABLES:
        parser.add_argument(switch, action="store_true")
    args = parser.parse_args()
    if args.exact_only:
        patch_exact(args.out)
        return
    for switch, title, rows in TABLES:
        if getattr(args, switch[2:].replace("-", "_")):
            patch_table(args.out, title, rows)
            return
    head = ("| ε0 | n | verifier EXACT [lo, hi] | CPU s | verifier LOWER (m = 0) | verifier UPPER (share 2/(e^ε0+1)) "
            "| clones, FMT's share e^−ε0 | FMT Thm 3.1 quoted | FMT Thm 3.1 verifier |")
    rule = "|---|---|---|---|---|---|---|---|---|"
    if args.peers:
        head += " FMT numeric [lo, hi] | Wang et al. [lo, hi] | s (ours lo+up / FMT / Wang) |"
        rule += "---|---|---|"
    lines = [head, rule]
    load = os.getloadavg()
    for e0 in EPS0:
        for n in USERS:
            o = ours(e0, n)
            exact = _exact_text(o["exact"], o["t_exact"])
            row = (f"| {e0:g} | {n:.0e} | {exact} | {o['lower']:.4g} | {o['upper']:.4g} | {o['fmt_share']:.4g} "
                   f"| {o['printed']:.4g}{'' if o['regime'] else ' (outside)'} | {_f(o['closed'])} |")
            if args.peers:
                q = peers(e0, n, args.peers)
                row += f" [{q['fmt_lo']:.4g}, {q['fmt_hi']:.4g}] | [{q['wang_lo']:.4g}, {q['wang_hi']:.4g}] | {o['t_lower'] + o['t_upper']:.1f} / {q['t_fmt']:.1f} / {q['t_wang']:.1f} |"
            lines.append(row)
            print(row, flush=True)
    for _, title, rows in TABLES:
        lines += ["", title, "", *rows()]
    text = "\n".join(lines) + f"\n\nδ = {DELTA:g}; load average at start {load[0]:.1f} (2 cores shared).\n"
    args.out.write_text(text)


if __name__ == "__main__":
    main()
