"""jax_privacy 2.0's batch selection strategies (``jax_privacy.batch_selection``) as verifier claims.

A strategy says which examples each of its ``iterations`` steps uses; with the noise multiplier σ
(noise σ·C for per-example gradients clipped at C, so sensitivity 1 in units of C), the dataset size
n and, for DP-MF, the non-zero entries ``c_col`` of C's first column (a banded Toeplitz C, as
jax_privacy's Monte Carlo accountant takes it; None is C = I, DP-SGD), it is the scheme of a claim:

- ``CyclicPoissonSampling(sampling_prob q, iterations T, truncated_batch_size, cycle_length b,
  partition_type)``: b = 1 and C = I is ``poisson`` (rate q, T steps), with truncation
  ``truncated_poisson`` (n, q, B, T); b > 1 (or a banded C) is ``banded_poisson`` (groups b, rate q,
  T steps, C; Choquette-Choo et al. 2023, amplified BandMF) when C's bandwidth is at most b, else
  ``matrix_poisson`` (MMCC). Under add/remove the groups must be drawn independently
  (``PartitionType.INDEPENDENT``, as jax_privacy's docstring requires: an equal split of the other
  examples moves when one is added); truncation with b > 1 or a matrix is refused.
- ``BallsInBinsSampling(iterations T, cycle_length b)``: every example in one uniformly drawn bin of
  b, used in every step of that bin: random allocation, ``allocation`` (b steps) for one epoch of
  DP-SGD, else the ``matrix`` scheme (b batches, T/b epochs, the same slot every epoch; Schuchardt &
  Kalinin) with C = I or the banded Toeplitz C. T must be a multiple of b.
- ``FixedBatchSampling(batch_size B, iterations T, replace)``: ``without_replacement`` (n, B, T) or,
  with ``replace``, ``with_replacement`` (n, m = B, T); both under replace-one neighbours only
  (n is public). A matrix C is refused.
- ``BMinSepSampling(sampling_prob p, iterations T, min_sep b, warm_start, truncated_batch_size)``:
  b = 1 excludes nothing, Poisson sampling (truncated if asked); p = 1 with a warm start and no
  truncation is balls-in-bins with cycle b (jax_privacy's docstring: every example not in the last
  b − 1 batches is drawn, and the warm start draws each example's first bin uniformly); every other
  case is refused with one line: verifier has no bound for Poisson sampling with a (b − 1)-step
  exclusion window (jax_privacy itself accounts it only by Monte Carlo).

Strategies are recognised by class name and read through their attributes, so jax_privacy is never
imported here. The claim is validated by :func:`~verifier.certify.claim.parse_claim`, so a relation a
scheme is not defined for is refused there with the scheme's own message.
"""

from __future__ import annotations

from typing import Any, Sequence

from verifier.certify.claim import Claim, parse_claim
from verifier.errors import InvalidArgument

__all__ = ["from_batch_selection", "STRATEGIES"]

#: The jax_privacy 2.0 strategies read, by class name.
STRATEGIES = ("CyclicPoissonSampling", "BallsInBinsSampling", "FixedBatchSampling", "BMinSepSampling")


def _matrix_fields(c_col: Sequence[float] | None) -> dict[str, Any]:
    """The claim's strategy fields: identity for None or [1], else a Toeplitz C with ``c_col``."""
    if c_col is None:
        return {"matrix": "identity"}
    coefficients = [float(x) for x in c_col]
    if not coefficients or any(x < 0 for x in coefficients):
        raise InvalidArgument("c_col", list(coefficients), "must be a non-empty list of the non-negative entries of C's first column (jax_privacy's convention)")
    return {"matrix": "identity"} if coefficients == [1.0] else {"matrix": "toeplitz", "coefficients": coefficients}


def _cyclic_poisson(
    q: float, steps: int, b: int, truncated: int | None, partition: str | None, n: int, neighboring: str, matrix: dict[str, Any]
) -> dict[str, Any]:
    """Poisson sampling of rate q every b-th step of its group (b = 1: every step), truncated at
    ``truncated`` examples if not None."""
    plain = matrix == {"matrix": "identity"}
    if truncated is not None:
        if b != 1 or not plain:
            raise InvalidArgument(
                "strategy.truncated_batch_size", truncated, "is modelled for cycle_length 1 and C = I only (truncated_poisson); "
                "truncated cyclic Poisson sampling and truncated DP-MF have no bound in verifier"
            )
        return {"name": "truncated_poisson", "dataset_size": n, "rate": q, "max_batch": int(truncated), "steps": steps}
    if b == 1 and plain:
        return {"name": "poisson", "rate": q, "steps": steps}
    if neighboring != "replace_one" and b > 1 and partition != "INDEPENDENT":
        raise InvalidArgument(
            "strategy.partition_type", partition, f"must be INDEPENDENT under {neighboring} neighbours with cycle_length {b} "
            "(an equal split of the other examples changes when one is added; jax_privacy's docstring says the same)"
        )
    width = len(matrix.get("coefficients", [1.0]))
    kind = "banded_poisson" if width <= b else "matrix_poisson"
    return {"name": kind, "groups": b, "rate": q, "steps": steps, **matrix}


def _balls_in_bins(steps: int, b: int, matrix: dict[str, Any], path: str) -> dict[str, Any]:
    """Every example in one uniform bin of b, used in every step of its bin, T = ``steps``."""
    if steps % b:
        raise InvalidArgument(f"{path}.iterations", steps, f"must be a multiple of cycle_length {b}: the first bins would get one step more "
                              "than the others, which the allocation and matrix schemes do not model")
    if steps == b and matrix == {"matrix": "identity"}:
        return {"name": "allocation", "steps": b}
    return {"name": "matrix", "batches": b, "epochs": steps // b, **matrix}


def _scheme(strategy: Any, n: int, neighboring: str, c_col: Sequence[float] | None) -> dict[str, Any]:
    """The claim's scheme object for ``strategy`` (module docstring)."""
    name = type(strategy).__name__
    matrix = _matrix_fields(c_col)
    if name == "CyclicPoissonSampling":
        partition = getattr(getattr(strategy, "partition_type", None), "name", None)
        return _cyclic_poisson(float(strategy.sampling_prob), int(strategy.iterations), int(strategy.cycle_length),
                               strategy.truncated_batch_size, partition, n, neighboring, matrix)
    if name == "BallsInBinsSampling":
        return _balls_in_bins(int(strategy.iterations), int(strategy.cycle_length), matrix, "strategy")
    if name == "FixedBatchSampling":
        if matrix != {"matrix": "identity"}:
            raise InvalidArgument("c_col", list(c_col or []), "is not modelled under fixed-size batches: verifier bounds DP-SGD (C = I) there")
        batch, steps = int(strategy.batch_size), int(strategy.iterations)
        if getattr(strategy, "replace", False):
            return {"name": "with_replacement", "dataset_size": n, "sample_size": batch, "steps": steps}
        return {"name": "without_replacement", "dataset_size": n, "batch_size": batch, "steps": steps}
    if name == "BMinSepSampling":
        p, steps, b = float(strategy.sampling_prob), int(strategy.iterations), int(strategy.min_sep)
        truncated = strategy.truncated_batch_size
        if b == 1:
            return _cyclic_poisson(p, steps, 1, truncated, None, n, neighboring, matrix)
        if p == 1.0 and strategy.warm_start and truncated is None:
            return _balls_in_bins(steps, b, matrix, "strategy")
        raise InvalidArgument(
            "strategy", f"BMinSepSampling(sampling_prob={p:g}, min_sep={b}, warm_start={strategy.warm_start}, truncated_batch_size={truncated})",
            "has no bound in verifier: Poisson sampling with a (min_sep - 1)-step exclusion window after each participation "
            "(only min_sep = 1, Poisson, and sampling_prob = 1 with a warm start, balls-in-bins, are modelled)",
        )
    raise InvalidArgument("strategy", name, "is not a jax_privacy batch selection strategy verifier reads (" + ", ".join(STRATEGIES) + ")")


def from_batch_selection(
    strategy: Any,
    *,
    noise_multiplier: float,
    num_examples: int,
    epsilon: float,
    delta: float,
    neighboring: str = "add_or_remove",
    c_col: Sequence[float] | None = None,
) -> Claim:
    """The claim "training with ``strategy`` over ``num_examples`` examples, Gaussian noise of
    ``noise_multiplier`` times the clipping norm (and, for DP-MF, the banded Toeplitz C whose first
    column's non-zero entries are ``c_col``), is (``epsilon``, ``delta``)-DP under ``neighboring``"
    (module docstring for the schemes). Raises InvalidArgument with one line naming what is
    missing for a strategy or case verifier cannot bound."""
    if isinstance(num_examples, bool) or not isinstance(num_examples, int) or num_examples < 1:
        raise InvalidArgument("num_examples", num_examples, "must be an integer >= 1")
    scheme = _scheme(strategy, num_examples, neighboring, c_col)
    source = f"jax_privacy {type(strategy).__name__}"
    return parse_claim({
        "mechanism": {"name": "gaussian", "sigma": noise_multiplier, "sensitivity": 1.0}, "scheme": scheme,
        "neighboring": neighboring, "epsilon": epsilon, "delta": delta, "source": source,
    })
