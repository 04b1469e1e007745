"""Monte Carlo estimates of δ(ε) with confidence intervals (Estimates, never Bounds).

- :func:`sample_loss`: privacy-loss samplers for every scheme and pair, both directions;
- :func:`estimate_delta`: chunked, seeded, resumable runs (in-process or dask) giving
  :class:`~verifier._types.Estimate` s at many ε from the same samples;
- :func:`mean_interval`: KL–Chernoff and empirical-Bernstein intervals for [0, 1] samples.
"""

from verifier.montecarlo.intervals import INTERVALS, mean_interval
from verifier.montecarlo.runner import DEFAULT_CHUNK_SIZE, IMPORTANCE, McResult, estimate_delta
from verifier.montecarlo.samplers import sample_loss

__all__ = [
    "sample_loss",
    "estimate_delta",
    "McResult",
    "mean_interval",
    "INTERVALS",
    "IMPORTANCE",
    "DEFAULT_CHUNK_SIZE",
]
