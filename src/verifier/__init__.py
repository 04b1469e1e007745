"""verifier: certify differential-privacy accounting.

Rigorous upper and lower bounds, high-confidence Monte Carlo estimates and verdicts for the privacy
of a mechanism (a dominating pair) run through a sampling/composition scheme.

The Python entry points mirror the commands (:mod:`verifier.api`)::

    import verifier
    result = verifier.certify({"mechanism": {"name": "gaussian", "sigma": 1.0},
                               "scheme": {"name": "poisson", "rate": 0.01, "steps": 1000}},
                              epsilon=2.0, delta=1e-5)
    result.verdict            # Verdict.CERTIFIED

``verifier.certify`` is also the :mod:`verifier.certify` package (claims, methods, verdicts):
calling it decides a claim. Every other name is imported on first use, so ``import verifier``
loads neither numpy nor a kernel (start-up time of every command: issue 41).
"""

from __future__ import annotations

import importlib
import types

from verifier import certify as _certify_package  # a docstring only: cheap to load
from verifier._version import __version__


class _CallableCertifyPackage(types.ModuleType):
    """The :mod:`verifier.certify` package, callable as :func:`verifier.api.certify` (the module
    keeps its submodules: ``verifier.certify.verdict`` still resolves)."""

    def __call__(self, claim: object = None, /, **options: object) -> object:
        from verifier.api import certify

        return certify(claim, **options)


_certify_package.__class__ = _CallableCertifyPackage

#: Public name -> the module it is defined in (imported on first use: PEP 562).
_WHERE = {
    **dict.fromkeys(("Bound", "Bracket", "Direction", "Dominance", "Estimate", "Measure", "Quantity", "Side", "directions_for"), "verifier._types"),
    **dict.fromkeys(
        (
            "AccuracyNotReachable",
            "IncompatibleObjects",
            "InconsistentBounds",
            "InvalidArgument",
            "NotApplicable",
            "NotCertified",
            "NumericalFailure",
            "VerifierError",
        ),
        "verifier.errors",
    ),
    **dict.fromkeys(("DiscretePair", "DominatingPair", "Gaussian", "Laplace", "RandomizedResponse"), "verifier.pairs"),
    **dict.fromkeys(("epsilon", "delta", "tradeoff", "Certification", "Profile", "claim_of"), "verifier.api"),
    "calibrate": "verifier.certify.calibrate",
}


def __getattr__(name: str) -> object:
    """A public name, imported from its module on first use (PEP 562)."""
    if name not in _WHERE:
        raise AttributeError(f"module 'verifier' has no attribute {name!r}")
    value = getattr(importlib.import_module(_WHERE[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__all__ = ["certify", *_WHERE, "__version__"]
