"""Every scheme type is handled by a registered method with rigorous bounds, or listed as
explicitly unsupported with a reason; and a method supports only the scheme types it declares."""

import pytest

from verifier.certify.coverage import UNSUPPORTED, handlers, scheme_types
from verifier.certify.registry import all_methods
from verifier.pairs import Gaussian, Laplace, RandomizedResponse
from verifier.matrix import bsr
from verifier.schemes import Allocation, CheckIn, Composed, MatrixMechanism, Poisson, Sequence, Shuffle, Single, WithoutReplacement
from verifier.schemes import PoissonReplaceOne

PAIRS = [Gaussian(1.0), Laplace(1.0), RandomizedResponse(1.0)]
SAMPLES = [
    scheme
    for pair in PAIRS
    for scheme in (
        Single(pair),
        Composed(Single(pair), 3),
        Poisson(pair, 0.01, 10),
        Allocation(pair, 10, 2, 2),
        Shuffle(pair, 10),
        CheckIn(pair, 20, 0.1, 3),
        WithoutReplacement(pair, 100, 10, 3),
        PoissonReplaceOne(pair, 0.01, 10),
    )
]
SAMPLES += [Sequence((Single(pair), Poisson(pair, 0.01, 10))) for pair in PAIRS]
SAMPLES += [MatrixMechanism(Gaussian(1.0), bsr(20, 3), 10, 2)]
SAMPLES += [Sequence((Composed(Single(pair), 2), Allocation(pair, 10, 2, 2))) for pair in PAIRS]


def test_scheme_union_lists_every_scheme_class():
    assert set(scheme_types()) == {Single, Composed, Poisson, Allocation, Sequence, Shuffle, CheckIn, MatrixMechanism, WithoutReplacement, PoissonReplaceOne}
    assert {type(s) for s in SAMPLES} == set(scheme_types())


@pytest.mark.parametrize("scheme_type", scheme_types(), ids=lambda t: t.__name__)
def test_every_scheme_type_is_handled_or_explicitly_unsupported(scheme_type):
    if not handlers(scheme_type):
        assert scheme_type in UNSUPPORTED, f"no registered method handles {scheme_type.__name__}; list it in UNSUPPORTED with a reason"
        assert len(UNSUPPORTED[scheme_type]) > 20


@pytest.mark.parametrize("method", all_methods(), ids=lambda m: m.name)
def test_methods_support_only_the_scheme_types_they_declare(method):
    assert set(method.scheme_types) <= set(scheme_types()), method.scheme_types
    for scheme in SAMPLES:
        if method.supports(scheme):
            assert type(scheme) in method.scheme_types, f"{method.name} supports {scheme!r} but does not declare {type(scheme).__name__} in scheme_types"


def test_reason_for_a_scheme_without_methods(monkeypatch):
    import verifier.certify.coverage as coverage

    scheme = Poisson(Gaussian(1.0), 0.1, 3)
    monkeypatch.setattr(coverage, "all_methods", lambda: [])
    assert coverage.unsupported_reason(scheme) == "no registered method handles Poisson"
    monkeypatch.setitem(coverage.UNSUPPORTED, Poisson, "waiting for the Poisson methods")
    assert coverage.unsupported_reason(scheme) == "waiting for the Poisson methods"
