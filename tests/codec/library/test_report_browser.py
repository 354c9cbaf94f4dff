"""The HTML report in a real browser (headless Chromium, Debian package `chromium`, installed by
tools/setup.sh): its plots draw and it asks the network for nothing.

Every request Chromium makes goes through a proxy that this test runs and that records each
connection; a page with one remote image proves the proxy does see them. Chromium's own
housekeeping (its updater and sign-in hosts, which even its switches leave on) is told apart
by host; any other host the page asked for fails the test.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import threading
from pathlib import Path

import numpy as np
import pytest

from codec.library.report_html import NEAR_COLOUR, OVER_COLOUR, library_html
from codec.library.rows import error_row

# Chromium's own requests, made whatever the page (checked against an empty page), and ""
# (_host: a connection that asked for nothing)
BROWSER_HOSTS = {"accounts.google.com", "update.googleapis.com", "clients2.google.com", ""}


def _host(request: bytes) -> str:
    """The host a proxied request is for: `CONNECT host:443` or `GET http://host/...`; ""
    for a connection closed without a request (Chromium's speculative preconnect: it asked
    for nothing, and a fresh clone's run once saw one)."""
    words = request.split(b"\r\n", 1)[0].split(b" ")
    if len(words) < 2:
        return ""
    target = words[1].decode(errors="replace")
    return target.split("://", 1)[-1].split("/", 1)[0].rsplit(":", 1)[0]


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    pytest.fail("headless Chromium is needed: install the Debian package chromium (tools/setup.sh)")


class RecordingProxy:
    """A TCP listener on localhost that records every connection (and answers nothing)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.requests: list[bytes] = []
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.sock.getsockname()[1]}"

    def _serve(self) -> None:
        while not self.stopped.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(3.0)  # a request sent late is still recorded
                try:
                    self.requests.append(conn.recv(4096))
                except OSError:
                    self.requests.append(b"")

    def close(self) -> None:
        self.stopped.set()
        self.thread.join(2)
        self.sock.close()


def _chromium_run(page: Path, output: str, proxy: RecordingProxy) -> str:
    """Open `page` in headless Chromium with every request sent to `proxy`, its scripts run
    (3 s of virtual time); `output` is --screenshot=PNG or --dump-dom. Returns stdout."""
    return subprocess.run(
        [
            _chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--disable-default-apps", "--disable-domain-reliability", "--no-pings",
            "--disable-client-side-phishing-detection", "--disable-breakpad",
            "--disable-features=NetworkTimeServiceQuerying,OptimizationHints,MediaRouter",
            f"--proxy-server=http://{proxy.address}",
            "--proxy-bypass-list=<-loopback>", "--window-size=1280,1600",
            f"--user-data-dir={page.parent / 'chromium-profile'}", "--virtual-time-budget=3000",
            output, page.as_uri(),
        ],
        check=True, capture_output=True, timeout=120, text=True,
    ).stdout  # fmt: skip


def _render(page: Path, png: Path, proxy: RecordingProxy) -> None:
    """Screenshot `page` to `png`."""
    _chromium_run(page, f"--screenshot={png}", proxy)


def test_report_draws_its_plots_and_loads_nothing(embedded, tmp_path):
    page = tmp_path / "report.html"
    page.write_text(library_html(embedded.rows, "library"))
    png = tmp_path / "report.png"
    proxy = RecordingProxy()
    try:
        _render(page, png, proxy)
        assert [h for h in map(_host, proxy.requests) if h not in BROWSER_HOSTS] == []
        # the detector works: a page with one remote image is caught
        remote = tmp_path / "remote.html"
        remote.write_text('<html><body><img src="http://example.com/a.png"></body></html>')
        _render(remote, tmp_path / "remote.png", proxy)
        assert "example.com" in map(_host, proxy.requests)
    finally:
        proxy.close()
    from PySide6.QtGui import QImage

    image = QImage(str(png)).convertToFormat(QImage.Format.Format_RGB888)
    h, w = image.height(), image.width()
    assert (w, h) == (1280, 1600)
    rgb = np.frombuffer(image.constBits(), np.uint8).reshape(h, image.bytesPerLine())
    rgb = rgb[:, : w * 3].reshape(h, w, 3).astype(int)

    def near(colour: str, tol: int = 40) -> int:
        want = np.array([int(colour[i : i + 2], 16) for i in (1, 3, 5)])
        return int((np.abs(rgb - want).max(axis=2) < tol).sum())

    # the plots' points (orange: near the budget) and the joints' bars are drawn
    assert near(NEAR_COLOUR, 8) > 60
    assert near("#5b7fa6", 8) > 5000
    assert near(OVER_COLOUR) == 0  # no clip of this library is over its budget


def _markup(field: str) -> str:
    """Text that is markup: an element and a script that runs if the page takes it as such."""
    script = f"document.body.setAttribute('data-ran-{field}', 1)"
    return f'<img id="x-{field}" src=x onerror="{script}">{field}'


FIELDS = ("file", "animation", "joint", "error", "folder")


def test_markup_in_every_text_field_is_shown_as_text(tmp_path):
    """A file, animation, joint or folder name and an error message holding markup are text
    in the page Chromium builds: no element and no script of theirs in its DOM."""
    row = {
        "path": _markup("file"), "animation": _markup("animation"), "joints": 2,
        "samples": 10, "duration": 1.0, "raw_size": 800, "compressed_size": 100,
        "compression_ratio": 8.0, "max_error": 0.009, "precision": 0.01,
        "precision_met": True, "worst_joint": _markup("joint"), "worst_time": 0.5,
        "codec": "acl-style", "compression_time": 0.1, "error": "",
    }  # fmt: skip
    rows = [row, dict(row, max_error=0.02, precision_met=False)]
    rows.append(error_row(_markup("file"), _markup("animation"), _markup("error")))
    meta = {"root": _markup("folder"), "precision": 0.01}
    page = tmp_path / "report.html"
    page.write_text(library_html(rows, f"library {_markup('folder')}", meta))
    # the detector works: the same markup let into the page makes an element and runs
    raw = tmp_path / "raw.html"
    raw.write_text(page.read_text().replace("<h2>Totals", _markup("control") + "<h2>Totals", 1))
    proxy = RecordingProxy()
    try:
        dom = _chromium_run(page, "--dump-dom", proxy)
        control = _chromium_run(raw, "--dump-dom", proxy)
    finally:
        proxy.close()
    assert '<img id="x-control"' in control and 'data-ran-control="1"' in control
    leaked = [f for f in FIELDS if f'<img id="x-{f}"' in dom or f'data-ran-{f}="1"' in dom]
    assert not leaked and "<img" not in dom, leaked
    for field in FIELDS:  # each shown, as the text it is
        assert f'&lt;img id="x-{field}" src=x onerror=' in dom, field
