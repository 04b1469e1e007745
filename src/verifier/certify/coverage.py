"""Which scheme types the registered methods handle, and the ones that are explicitly unsupported.

Every scheme class in :mod:`verifier.schemes` is either declared by at least one registered method
(:attr:`Method.scheme_types`) or listed in :data:`UNSUPPORTED` with the reason; a test holds this.
A claim about an unsupported scheme is answered INCONCLUSIVE with that reason, never guessed.
"""

from __future__ import annotations

import typing

from verifier.certify.registry import all_methods
from verifier.schemes import Scheme, Sequence

__all__ = ["UNSUPPORTED", "scheme_types", "handlers", "unsupported_reason"]

#: Scheme classes that no registered method handles, each with the reason (shown in the verdict of a
#: claim about it). A new scheme class lands here until its first method is registered.
UNSUPPORTED: dict[type, str] = {}


def scheme_types() -> tuple[type, ...]:
    """Every scheme class of :mod:`verifier.schemes` (the members of the ``Scheme`` union)."""
    return typing.get_args(Scheme)


def handlers(scheme_type: type) -> list[str]:
    """Names of the registered methods that declare ``scheme_type`` and give rigorous bounds (an
    ESTIMATE-only method, e.g. Monte Carlo, cannot decide a claim, so it does not count)."""
    return [m.name for m in all_methods() if scheme_type in m.scheme_types and m.sides()]


def unsupported_reason(scheme: Scheme) -> str:
    """Why no registered method supports ``scheme``: the :data:`UNSUPPORTED` entry of its class, or
    the names of the methods that handle its class but not these parameters/this pair; for a
    Sequence, the reason of each phase that no method supports on its own."""
    names = handlers(type(scheme))
    if isinstance(scheme, Sequence):
        lost = [
            f"phases[{i}]: {unsupported_reason(phase)}"
            for i, phase in enumerate(scheme.phases)
            if not any(m.sides() and m.supports(phase) for m in all_methods())
        ]
        if lost:
            return "a sequence is bounded only when each phase is; " + "; ".join(lost)
    if names:
        return f"the methods for {type(scheme).__name__} ({', '.join(names)}) do not support this pair or these parameters"
    return UNSUPPORTED.get(type(scheme), f"no registered method handles {type(scheme).__name__}")
