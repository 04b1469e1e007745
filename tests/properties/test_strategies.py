"""verifier.strategies is the public home of the Hypothesis strategies (issue 16): drawn values lie in
the documented ranges, and the properties package keeps no second copy."""

import importlib.util

from hypothesis import given, settings

from verifier import strategies
from verifier.pairs import Gaussian
from verifier.schemes import Composed, Poisson, Single


@settings(max_examples=40, deadline=None, database=None)
@given(strategies.schemes((Single, Composed, Poisson)), strategies.deltas(), strategies.epsilons())
def test_drawn_values_in_documented_ranges(scheme, delta, epsilon):
    step = scheme.scheme if isinstance(scheme, Composed) else scheme
    pair = step.pair
    assert isinstance(pair, Gaussian) and strategies.NOISE[0] <= pair.sigma <= strategies.NOISE[1]
    if isinstance(scheme, Composed):
        assert 1 <= scheme.times <= strategies.MAX_TIMES
    if isinstance(scheme, Poisson):
        assert 0 < scheme.rate <= 1 and 1 <= scheme.steps <= strategies.MAX_POISSON_STEPS
    assert delta in {10.0**-e for e in range(3, 10)}
    assert 0 <= epsilon <= 10


def test_one_home():
    assert importlib.util.find_spec("verifier.properties.strategies") is None
