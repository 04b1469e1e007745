"""The HTML report (issue 18): self-contained (nothing fetched from the network), and it shows the
verdict, both brackets per direction, every bound, the Monte Carlo evidence and the plot. Where
Chromium is installed, it renders headless to a non-blank page with the verdict badge and the
plot's claim marker visible."""

import base64

import pytest

from verifier.certify.calibrate import calibrate
from verifier.certify.claim import parse_claim
from verifier.certify.verdict import certify
from verifier.cli import main
from verifier.report.html import render_report, write_report

#: Four composed Gaussians of σ = 1 are one of σ = 1/2, whose exact ε(1e-5) is 9.99726 (Balle & Wang
#: 2018, Thm 8): CERTIFIED at ε = 10 by the closed form in milliseconds.
CLAIM = {"mechanism": {"name": "gaussian", "sigma": 1.0}, "scheme": {"name": "composed", "times": 4}, "epsilon": 10.0, "delta": 1e-5}


@pytest.fixture(scope="module")
def outcome():
    return certify(parse_claim(CLAIM))


def test_report_shows_verdict_brackets_bounds_and_plot(outcome, parse_html):
    page = parse_html(render_report(outcome, points=5))
    text = page.all_text
    assert page.verdict == "CERTIFIED"
    # both brackets in each direction, with the values of the certificate's best bounds
    for direction, bracket in outcome.epsilon.brackets.items():
        assert f"{bracket.lower:.10g}" in text and f"{bracket.upper:.10g}" in text
    assert text.count("δ(claimed ε)") == 2 and text.count("ε(claimed δ)") == 2
    for bound in outcome.delta.bounds:
        assert f"{bound.value:.10g}" in text and bound.method in text
    assert "Monte Carlo" in text and "Versions" in text
    images = [attrs["src"] for tag, attrs in page.tags if tag == "img"]
    assert len(images) == 1 and images[0].startswith("data:image/png;base64,")
    assert base64.b64decode(images[0].split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n"


def test_report_loads_nothing_from_the_network(outcome, parse_html):
    # Catches: a CDN stylesheet or script, a web font, a remote image.
    page = parse_html(render_report(outcome, points=3))
    for tag, attrs in page.tags:
        assert tag not in ("script", "link", "iframe", "object", "embed")
        for name in ("src", "href", "srcset", "data"):
            value = attrs.get(name)
            assert value is None or value.startswith("data:"), (tag, name, value)
    assert "url(" not in render_report(outcome, points=3).split("<body>")[0]


def test_report_escapes_the_claim_source():
    claim = dict(CLAIM, source="<script>alert(1)</script> & co")
    text = render_report(certify(parse_claim(claim)), points=3)
    assert "<script>" not in text and "&lt;script&gt;" in text


def test_calibration_section_lists_every_probe(parse_html):
    result = calibrate({"mechanism": {"name": "gaussian"}, "scheme": {"name": "single"}, "epsilon": 1.0, "delta": 1e-5})
    page = parse_html(render_report(result.outcome, calibration=result, points=3))
    text = page.all_text
    assert "Calibration of sigma" in text
    assert text.count("VIOLATED") + text.count("CERTIFIED") >= len(result.probes)


def test_cli_report_option(tmp_path, capsys, parse_html):
    target = tmp_path / "r.html"
    assert main(["certify", "--example", "gaussian-certified", "--report", str(target)]) == 0
    assert parse_html(target.read_text(encoding="utf-8")).verdict == "CERTIFIED"
    code = main(["certify", "--example", "gaussian-certified", "--report", str(tmp_path / "missing" / "r.html")])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and "report" in err


@pytest.mark.chromium
def test_report_renders_in_headless_chromium(outcome, tmp_path, rendered_in_chromium):
    rendered_in_chromium(write_report(tmp_path / "report.html", outcome, points=5))
