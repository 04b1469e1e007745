"""Strategy matrices (families, validation, files), the matrix claim and its CLI exit codes."""

import json
import subprocess
import sys

import numpy as np
import pytest

from verifier.certify.claim import parse_claim
from verifier.errors import InvalidArgument
from verifier.matrix import blt, bsr, from_array, gram, identity, load, means, toeplitz
from verifier.pairs import Gaussian
from verifier.schemes import MatrixMechanism


def test_bsr_coefficients_are_the_square_root_of_the_prefix_sum_matrix():
    """r_t = binom(2t,t)/4^t (notes §1.1): the full BSR squared is the all-ones lower triangle."""
    c = bsr(6, 6).dense()
    np.testing.assert_allclose(c @ c, np.tril(np.ones((6, 6))), rtol=1e-15)
    assert bsr(10, 3).width == 3 and identity(4).width == 1


def test_toeplitz_and_blt_families():
    np.testing.assert_array_equal(toeplitz(3, [1.0, 0.5]).dense(), [[1, 0, 0], [0.5, 1, 0], [0, 0.5, 1]])
    c = blt(4, [0.5], [0.25]).dense()
    np.testing.assert_allclose(c[:, 0], [1.0, 0.25, 0.125, 0.0625])  # c_t = ω θ^{t−1}


def test_means_and_gram_follow_lemma_2_8():
    """m_i = Σ_j |C|[:, i + j b], G = M Mᵀ, computed from a dense C by hand."""
    rng = np.random.default_rng(3)
    c = np.tril(rng.normal(size=(6, 6)))
    c[np.abs(np.subtract.outer(np.arange(6), np.arange(6))) >= 3] = 0.0
    strategy = from_array(c)
    assert strategy.signed
    a = np.abs(c)
    m = np.stack([a[:, i] + a[:, i + 3] for i in range(3)])
    np.testing.assert_allclose(means(strategy, 3, 2), m, rtol=1e-15)
    np.testing.assert_allclose(gram(strategy, 3, 2), m @ m.T, rtol=1e-14)


@pytest.mark.parametrize(
    "matrix, rule",
    [
        (np.ones((2, 3)), "square"),
        (np.array([[1.0, 1.0], [0.0, 1.0]]), "lower-triangular"),
        (np.array([[1.0, 0.0], [np.nan, 1.0]]), "finite"),
        (np.array([[1.0, 0.0], [np.inf, 1.0]]), "finite"),
    ],
)
def test_malformed_matrices_are_rejected(matrix, rule):
    with pytest.raises(InvalidArgument, match=rule):
        from_array(matrix)


def test_files_npy_and_csv(tmp_path):
    c = bsr(4, 2).dense()
    np.save(tmp_path / "c.npy", c)
    np.savetxt(tmp_path / "c.csv", c, delimiter=",")
    assert load(tmp_path / "c.npy") == load(tmp_path / "c.csv") == from_array(c)
    with pytest.raises(InvalidArgument, match="npy or .csv"):
        load(tmp_path / "c.txt")
    with pytest.raises(InvalidArgument, match="cannot be read"):
        load(tmp_path / "missing.npy")


def test_scheme_needs_gaussian_and_matching_size():
    with pytest.raises(InvalidArgument, match="epochs·batches"):
        MatrixMechanism(Gaussian(1.0), bsr(10, 2), 3, 3)
    from verifier.pairs import Laplace

    with pytest.raises(InvalidArgument, match="Gaussian"):
        MatrixMechanism(Laplace(1.0), bsr(10, 2), 10, 1)


def _claim(**scheme):
    return {"mechanism": {"name": "gaussian", "sigma": 2.0}, "scheme": {"name": "matrix", **scheme}, "epsilon": 1.0, "delta": 1e-5}


def test_matrix_claim_round_trips_and_validates_fields():
    claim = parse_claim(_claim(matrix="bsr", bands=4, batches=10, epochs=2))
    assert claim.model == MatrixMechanism(Gaussian(2.0), bsr(20, 4), 10, 2)
    assert parse_claim(claim.to_dict()) == claim
    with pytest.raises(InvalidArgument, match="scheme.bands"):
        parse_claim(_claim(matrix="bsr", batches=10))
    with pytest.raises(InvalidArgument, match="scheme.bands"):
        parse_claim(_claim(matrix="identity", bands=3, batches=10))
    with pytest.raises(InvalidArgument, match="scheme.matrix"):
        parse_claim(_claim(batches=10))
    with pytest.raises(InvalidArgument, match="neighboring"):
        parse_claim({**_claim(matrix="identity", batches=10), "neighboring": "replace_one"})


def test_signed_matrix_is_stated_in_the_modelling(tmp_path):
    c = np.array([[1.0, 0.0], [-0.5, 1.0]])
    np.save(tmp_path / "c.npy", c)
    claim = parse_claim(_claim(matrix_file=str(tmp_path / "c.npy"), batches=2))
    assert "|C|" in claim.modelling


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "verifier", *args], capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize(
    "matrix, rule",
    [(np.ones((4, 3)), "square"), (np.triu(np.ones((4, 4))), "lower-triangular"), (np.where(np.eye(4) > 0, np.nan, 0.0), "finite")],
    ids=["not-square", "not-lower-triangular", "nan"],
)
def test_malformed_matrix_file_exits_2_with_one_line(tmp_path, matrix, rule):
    """Done-when 5 (second half): a malformed matrix file exits 2, one line, no traceback."""
    np.save(tmp_path / "c.npy", matrix)
    claim = tmp_path / "claim.json"
    claim.write_text(json.dumps(_claim(matrix_file=str(tmp_path / "c.npy"), batches=4)))
    result = _cli("certify", str(claim))
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert "matrix_file" in result.stderr and rule in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_rdp_cli_prints_the_curve_and_the_abs_note(tmp_path):
    np.savetxt(tmp_path / "c.csv", np.array([[1.0, 0.0], [-0.5, 1.0]]), delimiter=",")
    result = _cli("rdp", "--scheme", "matrix", "--matrix-file", str(tmp_path / "c.csv"), "--batches", "2", "--sigma", "1", "--orders", "2,3")
    assert result.returncode == 0, result.stderr
    assert "|C|" in result.stdout and "exact" in result.stdout


def test_compare_draws_matrix_mechanism_curves(tmp_path, capsys):
    """`verifier compare --matrix …`: every method's ε against σ; the projection LOWER bound stays
    below the Rényi UPPER bound, and both fall as σ grows."""
    from verifier.cli import main

    out = tmp_path / "matrix.png"
    code = main(["compare", "--matrix", "bsr", "--bands", "2", "--batches", "5", "--epochs", "2", "--sigma-min", "1",
                 "--sigma-max", "3", "--points", "3", "--delta", "1e-5", "--method", "rdp", "--method", "matrix-projection",
                 "--out", str(out), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and out.stat().st_size > 1000
    series = {(s["label"], s["side"]): s["values"] for s in data["series"]}
    lower, upper = series[("matrix-projection", "lower")], series[("rdp", "upper")]
    assert all(0 < lo <= up for lo, up in zip(lower, upper))
    assert upper == sorted(upper, reverse=True) and lower == sorted(lower, reverse=True)
    assert main(["compare", "--matrix", "bsr", "--sigma-min", "1", "--sigma-max", "2", "--delta", "1e-5"]) == 2
