"""Run every derivation in proofs/ and report one line per script.

Usage, from the repository root::

    python proofs/run_all.py        # or: python -m proofs.run_all

Prints ``ok`` or ``FAILED: <reason>`` with the run time for each script, and how many checks were
proved symbolically and how many at exact rational points; exits with status 1 if any failed.
Each derivation raises proofs._common.DerivationFailed when a derived expression and its claimed
closed form disagree; any other exception is reported as a failure too (with its type), never
swallowed.
"""

from __future__ import annotations

import importlib
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as `python proofs/run_all.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from proofs import _common

__all__ = ["SCRIPTS", "ScriptResult", "main", "run_all"]

#: Every derivation module, in the order they are run.
SCRIPTS = (
    "gaussian_renyi",
    "gaussian_hockey_stick",
    "laplace_renyi",
    "laplace_hockey_stick",
    "randomized_response",
    "hockey_stick_duality",
    "allocation_partition_sum", "allocation_alpha2",
    "allocation_convex_split",
    "approx_dp",
    "substitution_mixture",
    "allocation_theorem_constants",
    "allocation_add_taylor",
    "antipodal_dominance",
    "fixed_batch_domination",
    "gram_step_split",
    "tradeoff_conversion",
    "shuffle_count",
    "shuffle_coupling",
    "shuffled_reduction",
    "shuffle_binary",
    "shuffle_ranges",
    "shuffle_blanket",
    "shuffle_clone_sum",
    "shuffle_gaussian_blanket",
    "zcdp_sup",
    "mmcc_posterior",
    "matrix_chain",
    "batch_sampling",
    "discrete_gaussian",
    "selection_mechanisms",
    "permute_and_flip",
    "tradeoff_from_profile",
    "packed_fft",
)


@dataclass(frozen=True)
class ScriptResult:
    """Outcome of one derivation script."""

    name: str
    ok: bool
    seconds: float
    detail: str  # "n symbolic, m at points" when ok; the failure reason otherwise
    exports: tuple[tuple[str, Any], ...] = ()  # (name, verified sympy expression), when ok


def run_one(name: str) -> ScriptResult:
    start = time.perf_counter()
    before = dict(_common.METHOD_COUNTS)
    try:
        module = importlib.import_module(f"proofs.{name}")
        exports = module.derive()
    except _common.DerivationFailed as exc:
        return ScriptResult(name, False, time.perf_counter() - start, str(exc))
    except Exception as exc:  # report, never swallow: the run still fails
        tail = traceback.format_exception_only(type(exc), exc)[-1].strip()
        return ScriptResult(name, False, time.perf_counter() - start, f"error: {tail}")
    counts = {
        key: _common.METHOD_COUNTS[key] - before.get(key, 0) for key in ("symbolic", "points")
    }
    detail = f"{counts['symbolic']} checks symbolic, {counts['points']} at exact points"
    return ScriptResult(name, True, time.perf_counter() - start, detail, tuple(exports.items()))


def run_all(scripts: tuple[str, ...] | None = None) -> list[ScriptResult]:
    """Run the derivations (default: all of :data:`SCRIPTS`) in this process; one result each."""
    return [run_one(name) for name in (SCRIPTS if scripts is None else scripts)]


def main() -> int:
    start = time.perf_counter()
    results = run_all()
    width = max(len(result.name) for result in results)
    for result in results:
        status = "ok" if result.ok else "FAILED"
        print(f"{result.name:<{width}}  {status:<6}  {result.seconds:6.2f} s  {result.detail}")
    failed = [r.name for r in results if not r.ok]
    total = time.perf_counter() - start
    if failed:
        print(f"{len(failed)} of {len(results)} derivations FAILED ({', '.join(failed)}); "
              f"total {total:.2f} s")
        return 1
    print(f"all {len(results)} derivations ok; total {total:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
