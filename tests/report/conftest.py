"""Shared helpers for the HTML report tests: an HTML parser and a headless-Chromium renderer."""

import shutil
import subprocess
from html.parser import HTMLParser

import numpy as np
import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

#: Colours the rendered page must show: the CERTIFIED badge and the plot's claim star (matplotlib
#: 'crimson'); matched within this L1 distance (anti-aliasing), on at least MIN_PIXELS pixels.
BADGE, STAR = (0x1A, 0x7F, 0x37), (0xDC, 0x14, 0x3C)
COLOUR_TOLERANCE, MIN_PIXELS = 6, 50


class Page(HTMLParser):
    """Tags with their attributes, all text, and the text of the element with id="verdict"."""

    def __init__(self, text: str):
        super().__init__()
        self.tags, self.text, self.verdict, self._in_verdict = [], [], None, False
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append((tag, attrs))
        self._in_verdict = attrs.get("id") == "verdict"

    def handle_data(self, data):
        self.text.append(data)
        if self._in_verdict:
            self.verdict, self._in_verdict = data.strip(), False

    @property
    def all_text(self) -> str:
        return " ".join(self.text)


@pytest.fixture
def parse_html():
    """The :class:`Page` parser: ``parse_html(text)``."""
    return Page


@pytest.fixture
def rendered_in_chromium(tmp_path):
    """A function: render an HTML file in headless Chromium (network names unresolvable) and assert
    the screenshot is not blank and shows the verdict badge and the plot's claim star."""
    if CHROMIUM is None:
        pytest.skip("Chromium is not installed (Debian: apt-get install chromium)")

    def check(report):
        from matplotlib.image import imread

        shot = tmp_path / "shot.png"
        command = [
            CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=1200,1600",
            "--host-resolver-rules=MAP * ~NOTFOUND", f"--screenshot={shot}", report.resolve().as_uri(),
        ]
        subprocess.run(command, capture_output=True, timeout=120, check=False)
        assert shot.exists(), "Chromium wrote no screenshot"
        pixels = (imread(shot)[..., :3] * 255).round().astype(int)
        assert (pixels < 250).any(axis=-1).mean() > 0.02, "the page rendered blank"
        for colour in (BADGE, STAR):
            assert (np.abs(pixels - colour).sum(axis=-1) <= COLOUR_TOLERANCE).sum() > MIN_PIXELS, f"colour {colour} not on the page"

    return check
