"""Finding a display, or making a private one, without Qt."""

from __future__ import annotations

import shutil
from pathlib import Path

from app.model.display import PrivateXServer, has_display


def test_no_display_variables_means_no_display() -> None:
    assert not has_display({})
    assert not has_display({"DISPLAY": ":1", "QT_QPA_PLATFORM": "offscreen"})  # no OpenGL
    assert not has_display({"DISPLAY": ":987"})  # nothing answers there
    assert has_display({"WAYLAND_DISPLAY": "wayland-0"})


def test_a_private_x_server_comes_and_goes() -> None:
    """Its process, socket and lock file go with it. Another X server may take the freed
    display number at once (other test runs on the machine, our other xdist worker), so a
    socket at that path afterwards is a leak only when nothing answers there, and a lock
    file only when it names our Xvfb's PID."""
    assert shutil.which("Xvfb"), "make setup installs xvfb"
    with PrivateXServer(640, 480) as server:
        assert server.display is not None and server.display.startswith(":")
        assert has_display({"DISPLAY": server.display})
        number = server.display[1:]
        process = server.process
        assert process is not None
        sock, lock = Path(f"/tmp/.X11-unix/X{number}"), Path(f"/tmp/.X{number}-lock")
        assert sock.exists()
    assert process.poll() is not None
    assert not sock.exists() or has_display({"DISPLAY": f":{number}"})
    try:
        owner = int(lock.read_text().strip())
    except (OSError, ValueError):
        owner = None
    assert owner != process.pid
