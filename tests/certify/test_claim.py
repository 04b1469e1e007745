"""Claims: strict validation naming the field, defaults, and the replace-one model."""

import json

import pytest

from verifier._types import Direction
from verifier.certify.claim import load_claim, parse_claim
from verifier.errors import InvalidArgument
from verifier.pairs import Gaussian, Laplace, RandomizedResponse
from verifier.schemes import Allocation, Composed, Poisson, Single


def claim(**overrides):
    base = {
        "mechanism": {"name": "gaussian", "sigma": 1.0},
        "scheme": {"name": "single"},
        "epsilon": 1.0,
        "delta": 1e-5,
    }
    base.update(overrides)
    return base


def test_defaults_are_filled_and_round_trip():
    c = parse_claim(claim())
    assert c.mechanism == {"name": "gaussian", "sigma": 1.0, "sensitivity": 1.0}
    assert c.neighboring == "add_or_remove"
    assert c.directions == (Direction.ADD, Direction.REMOVE)
    assert c.model == Single(Gaussian(1.0, 1.0))
    assert parse_claim(c.to_dict()) == c


@pytest.mark.parametrize(
    "scheme, model",
    [
        ({"name": "composed", "times": 3}, Composed(Single(Laplace(2.0)), 3)),
        ({"name": "poisson", "rate": 0.01, "steps": 1000}, Poisson(Laplace(2.0), 0.01, 1000)),
        ({"name": "allocation", "steps": 10}, Allocation(Laplace(2.0), 10, 1, 1)),
        ({"name": "allocation", "steps": 10, "k": 2, "epochs": 3}, Allocation(Laplace(2.0), 10, 2, 3)),
    ],
)
def test_every_scheme_kind_builds_its_model(scheme, model):
    c = parse_claim(claim(mechanism={"name": "laplace", "scale": 2}, scheme=scheme))
    assert c.model == model


def test_rr_and_single_direction():
    c = parse_claim(claim(mechanism={"name": "rr", "epsilon0": 1.0, "k": 3}, neighboring="add"))
    assert c.model == Single(RandomizedResponse(1.0, 3))
    assert c.directions == (Direction.ADD,)


def test_replace_one_doubles_the_sensitivity_of_additive_noise():
    c = parse_claim(claim(mechanism={"name": "gaussian", "sigma": 2.0, "sensitivity": 1.5}, neighboring="replace_one"))
    assert c.model == Single(Gaussian(2.0, 3.0))
    assert c.directions == (Direction.ADD, Direction.REMOVE)
    assert c.mechanism["sensitivity"] == 1.5  # the claim keeps what the user said
    c = parse_claim(claim(mechanism={"name": "laplace", "scale": 1.0}, scheme={"name": "composed", "times": 4}, neighboring="replace_one"))
    assert c.model == Composed(Single(Laplace(1.0, 2.0)), 4)


@pytest.mark.parametrize(
    "mechanism, scheme, needle",
    [
        ({"name": "gaussian", "sigma": 1}, {"name": "allocation", "steps": 2}, "allocation"),
        ({"name": "rr", "epsilon0": 1}, {"name": "poisson", "rate": 0.1, "steps": 2}, "additive-noise"),
        ({"name": "gaussian_mixture", "sigma": 1, "sensitivities": [1], "probabilities": [1]}, {"name": "single"}, "additive-noise"),
    ],
)
def test_replace_one_is_rejected_where_the_reduction_fails(mechanism, scheme, needle):
    with pytest.raises(InvalidArgument, match=needle) as info:
        parse_claim(claim(mechanism=mechanism, scheme=scheme, neighboring="replace_one"))
    assert info.value.name == "neighboring"


def test_replace_one_of_a_record_pair_is_the_pair_itself():
    """Randomized response is the step on two records: replace-one is the pair, both directions
    (a doubled 'sensitivity' would be meaningless). Catches: the pair doubled or one direction."""
    c = parse_claim(claim(mechanism={"name": "rr", "epsilon0": 1.0}, scheme={"name": "composed", "times": 3}, neighboring="replace_one"))
    assert c.model == Composed(Single(RandomizedResponse(1.0)), 3) and set(c.directions) == set(Direction)


def test_replace_one_under_poisson_sampling_keeps_the_record_pair():
    """Poisson + replace_one is its own scheme, built from the add/remove pair of one record (not
    the doubled pair: the convex-combination bound needs both), both directions required."""
    from verifier.schemes import PoissonReplaceOne

    c = parse_claim(claim(mechanism={"name": "gaussian", "sigma": 1.1}, scheme={"name": "poisson", "rate": 0.1, "steps": 2}, neighboring="replace_one"))
    assert c.model == PoissonReplaceOne(Gaussian(1.1, 1.0), 0.1, 2)
    assert set(c.directions) == set(Direction)


@pytest.mark.parametrize(
    "change, field",
    [
        ({"delta": None}, "delta"),  # missing δ (None means: drop the key)
        ({"epsilon": None}, "epsilon"),
        ({"mechanism": None}, "mechanism"),
        ({"delta": 1.5}, "delta"),
        ({"delta": -1e-300}, "delta"),  # δ = 0 is a pure-DP claim; below 0 is not
        ({"delta": 1.0}, "delta"),
        ({"delta": "1e-5"}, "delta"),
        ({"epsilon": True}, "epsilon"),
        ({"mechanism": {"name": "gaussian", "sigma": "abc"}}, "mechanism.sigma"),
        ({"mechanism": {"name": "gaussian", "sigma": -1}}, "mechanism.sigma"),
        ({"mechanism": {"name": "gaussian"}}, "mechanism.sigma"),
        ({"mechanism": {"sigma": 1}}, "mechanism.name"),
        ({"mechanism": {"name": "gaussian", "sigma": 1, "scale": 2}}, "mechanism.scale"),
        ({"mechanism": {"name": "report_noisy_max", "sigma": 1}}, "mechanism.name"),
        ({"mechanism": {"name": "rr", "epsilon0": 1, "k": 1}}, "mechanism.k"),
        ({"mechanism": [1, 2]}, "mechanism"),
        ({"scheme": {"name": "bogus_scheme"}}, "scheme.name"),
        ({"scheme": {"name": "poisson", "rate": 0.1}}, "scheme.steps"),
        ({"scheme": {"name": "poisson", "rate": 0, "steps": 1}}, "scheme.rate"),
        ({"scheme": {"name": "poisson", "rate": 0.1, "steps": 1.5}}, "scheme.steps"),
        ({"scheme": {"name": "allocation", "steps": 3, "k": 5}}, "scheme.k"),
        ({"scheme": {"name": "single", "times": 2}}, "scheme.times"),
        ({"neighboring": "replace"}, "neighboring"),
        ({"accountant": "x"}, "accountant"),
        ({"source": 3}, "source"),
    ],
)
def test_malformed_claims_name_the_field(change, field):
    obj = claim()
    for key, value in change.items():
        if value is None:
            del obj[key]
        else:
            obj[key] = value
    with pytest.raises(InvalidArgument) as info:
        parse_claim(obj)
    assert info.value.name == field
    assert "\n" not in str(info.value)


def test_claim_that_is_not_an_object():
    with pytest.raises(InvalidArgument, match="JSON object"):
        parse_claim([1])


def test_load_claim_reads_json_and_rejects_bad_files(tmp_path):
    good = tmp_path / "claim.json"
    good.write_text(json.dumps(claim()))
    assert load_claim(good).delta == 1e-5
    for text, needle in [("{", "not valid JSON"), ('{"epsilon": NaN}', "NaN"), ('{"epsilon": Infinity}', "Infinity")]:
        bad = tmp_path / "bad.json"
        bad.write_text(text)
        with pytest.raises(InvalidArgument, match=needle):
            load_claim(bad)
    with pytest.raises(InvalidArgument, match="cannot be read"):
        load_claim(tmp_path / "missing.json")
