"""Every scheme type is handled by a registered method with rigorous bounds, or listed as
explicitly unsupported with a reason; and a method supports only the scheme types it declares."""

import pytest

from verifier.certify.coverage import UNSUPPORTED, handlers, scheme_types
from verifier.certify.registry import all_methods
from verifier.pairs import Gaussian, Laplace, RandomizedResponse
from verifier.matrix import bsr
from verifier.schemes import Allocation, CheckIn, Composed, MatrixMechanism, Poisson, Sequence, Shuffle, Single, WithoutReplacement
from verifier.schemes import BandedPoisson, MatrixPoisson, PoissonReplaceOne, RepeatAndSelect, SampledZCDP, Selection, ShuffledBatches, TruncatedPoisson, WithReplacement, ZCDP

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
        ShuffledBatches(pair, 100, 30, 2),
    )
]
SAMPLES += [Sequence((Single(pair), Poisson(pair, 0.01, 10))) for pair in PAIRS]
SAMPLES += [MatrixMechanism(Gaussian(1.0), bsr(20, 3), 10, 2), BandedPoisson(Gaussian(1.0), bsr(20, 3), 4, 0.1), MatrixPoisson(Gaussian(1.0), bsr(20, 3), 0.1)]
SAMPLES += [TruncatedPoisson(Gaussian(1.0), 100, 0.1, 5, 3), TruncatedPoisson(Gaussian(1.0), 100, 0.1, 5, 3, replace_one=True), WithReplacement(Gaussian(1.0, 2.0), 100, 10, 3)]
SAMPLES += [Sequence((Composed(Single(pair), 2), Allocation(pair, 10, 2, 2))) for pair in PAIRS]
SAMPLES += [ZCDP(0.5), Composed(ZCDP(0.1, 0.01), 3), SampledZCDP(ZCDP(0.5), 0.1, 4), Sequence((ZCDP(0.5), Poisson(Gaussian(1.0), 0.01, 10)))]
SAMPLES += [Selection("exponential", 1.0), Composed(Selection("permute_and_flip", 0.5), 3), Sequence((Selection("exponential", 0.5), ZCDP(0.1)))]
SAMPLES += [RepeatAndSelect(Poisson(Gaussian(1.0), 0.01, 10), 10.0, 1.0), Composed(RepeatAndSelect(Composed(ZCDP(0.1), 2), 3.0, 0.0), 2)]


def defined_scheme_classes() -> set[type]:
    """Every dataclass defined in verifier.schemes, found by introspection (not a hand-kept list:
    the old test compared the union with a literal set, so a class added to the module but not to
    the ``Scheme`` union, and hence invisible to every coverage check, went unnoticed)."""
    import dataclasses
    import inspect

    import verifier.schemes as module

    return {
        cls for _, cls in inspect.getmembers(module, inspect.isclass)
        if cls.__module__ == module.__name__ and dataclasses.is_dataclass(cls)
    }


def check_coverage(union: set[type], defined: set[type], handled_by) -> None:
    """The coverage contract: the union holds every scheme class the module defines, and each is
    handled by a registered rigorous method or listed in UNSUPPORTED with a reason."""
    assert union == defined, f"scheme classes missing from the Scheme union: {sorted(c.__name__ for c in defined - union)}"
    for scheme_type in union:
        assert handled_by(scheme_type) or len(UNSUPPORTED.get(scheme_type, "")) > 20, (
            f"no registered method handles {scheme_type.__name__}; list it in UNSUPPORTED with a reason"
        )


def test_scheme_union_lists_every_scheme_class():
    check_coverage(set(scheme_types()), defined_scheme_classes(), handlers)
    assert set(scheme_types()) == {Single, Composed, Poisson, Allocation, Sequence, Shuffle, CheckIn, MatrixMechanism, WithoutReplacement, PoissonReplaceOne, ShuffledBatches, BandedPoisson, ZCDP, Selection, SampledZCDP, RepeatAndSelect, MatrixPoisson, TruncatedPoisson, WithReplacement}
    assert {type(s) for s in SAMPLES} == set(scheme_types())


def test_coverage_check_catches_a_scheme_missing_from_the_union():
    """Mutant: a scheme class defined in verifier.schemes but left out of the ``Scheme`` union."""
    union = set(scheme_types()) - {Shuffle}
    with pytest.raises(AssertionError, match="Shuffle"):
        check_coverage(union, defined_scheme_classes(), handlers)


def test_coverage_check_catches_a_scheme_whose_methods_are_not_registered():
    """Mutant: the adapter module of a scheme's methods dropped from ADAPTERS (no method declares
    the class any more), while the class is not listed as UNSUPPORTED."""
    def without_allocation(scheme_type):
        return [] if scheme_type is Allocation else handlers(scheme_type)

    with pytest.raises(AssertionError, match="Allocation"):
        check_coverage(set(scheme_types()), defined_scheme_classes(), without_allocation)


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
