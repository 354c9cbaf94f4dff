"""Is there a display the 3D view can draw on, and if not, a private X server to draw on.

Qt-free so the entry point can decide before a QApplication exists: Qt aborts the process
(SIGABRT) when its xcb plugin cannot reach an X server, and its `offscreen` platform has no
OpenGL. Screenshots and the tests therefore run on a private Xvfb (Mesa llvmpipe) that this
module starts and stops; nothing of it outlives the process that started it.
"""

from __future__ import annotations

import os
import select
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Mapping

NO_GL_PLATFORMS = ("offscreen", "minimal", "vnc", "linuxfb", "eglfs")
XVFB_START_TIMEOUT = 10.0  # s


class NoDisplayError(RuntimeError):
    """No display to draw on and no way to make one."""


def _x_socket_reachable(display: str, timeout: float = 1.0) -> bool:
    """True when an X server answers at `display` (":N", ":N.S", "host:N" or "unix:N")."""
    host, _, rest = display.rpartition(":")
    number = rest.split(".")[0]
    if not number.isdigit():
        return False
    if host in ("", "unix") or host.startswith("/"):
        path = host if host.startswith("/") else f"/tmp/.X11-unix/X{number}"
        for address in (path, "\0" + path):  # the file socket, then Linux's abstract one
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(timeout)
            try:
                s.connect(address)
                return True
            except OSError:
                continue
            finally:
                s.close()
        return False
    try:
        with socket.create_connection((host, 6000 + int(number)), timeout=timeout):
            return True
    except OSError:
        return False


def has_display(env: Mapping[str, str] | None = None) -> bool:
    """Can Qt open an OpenGL window here? (Linux: a reachable X or Wayland display.)"""
    env = os.environ if env is None else env
    platform = env.get("QT_QPA_PLATFORM", "").split(":")[0]
    if platform in NO_GL_PLATFORMS:
        return False
    if not sys.platform.startswith("linux"):
        return True
    if platform == "wayland":
        return bool(env.get("WAYLAND_DISPLAY"))
    display = env.get("DISPLAY", "")
    if display and _x_socket_reachable(display):
        return True
    return platform == "" and bool(env.get("WAYLAND_DISPLAY"))


def _die_with_parent() -> None:
    """In the Xvfb child: ask Linux to end it when the process that started it ends, however
    that process ends (a crash included)."""
    if sys.platform.startswith("linux"):
        import ctypes
        import signal

        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)


class PrivateXServer:
    """An Xvfb on a free display number, for this process and its children only.

    Use as a context manager or call `start()` / `stop()`; `start()` returns the DISPLAY
    value. Xvfb removes its own lock file and socket when it is stopped.
    """

    def __init__(self, width: int = 1920, height: int = 1200) -> None:
        self.size = f"{width}x{height}x24"
        self.process: subprocess.Popen[bytes] | None = None
        self.display: str | None = None

    def start(self) -> str:
        exe = shutil.which("Xvfb")
        if exe is None:
            raise NoDisplayError("no display, and Xvfb is not installed to make one")
        read_end, write_end = os.pipe()
        try:
            self.process = subprocess.Popen(
                [
                    exe,
                    "-displayfd",
                    str(write_end),
                    "-screen",
                    "0",
                    self.size,
                    "-nolisten",
                    "tcp",
                    "-noreset",
                ],
                pass_fds=(write_end,),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,  # a Ctrl+C in the terminal is ours to handle
                preexec_fn=_die_with_parent,
            )
            os.close(write_end)
            write_end = -1
            number = self._read_display_number(read_end)
        finally:
            if write_end >= 0:
                os.close(write_end)
            os.close(read_end)
        self.display = f":{number}"
        return self.display

    def _read_display_number(self, fd: int) -> str:
        deadline = time.monotonic() + XVFB_START_TIMEOUT
        text = b""
        while not text.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                self.stop()
                raise NoDisplayError("Xvfb did not start within 10 s")
            chunk = os.read(fd, 32)
            if not chunk:
                self.stop()
                raise NoDisplayError("Xvfb exited before it was ready")
            text += chunk
        return text.decode().strip()

    def stop(self) -> None:
        p, self.process = self.process, None
        if p is not None and p.poll() is None:
            p.terminate()
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

    def __enter__(self) -> PrivateXServer:
        self.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop()


def use_display(display: str, env: os._Environ[str] | dict[str, str] | None = None) -> None:
    """Point Qt (xcb) and PyOpenGL (glx) of this process and its children at `display`."""
    env = os.environ if env is None else env
    env["DISPLAY"] = display
    env["QT_QPA_PLATFORM"] = "xcb"
    env["PYOPENGL_PLATFORM"] = "glx"
