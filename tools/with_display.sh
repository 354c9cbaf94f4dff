#!/usr/bin/env bash
# Run a command on the real display if there is one, else on a private Xvfb (GLX via llvmpipe).
set -euo pipefail
export PYOPENGL_PLATFORM="${PYOPENGL_PLATFORM:-glx}"
if [ -n "${DISPLAY:-}" ] && [ "${SHELLSCOPE_FORCE_XVFB:-0}" != 1 ]; then
    exec "$@"
fi
export QT_QPA_PLATFORM=xcb
export SHELLSCOPE_XVFB=1  # tells the test suite this display is private already
export LIBGL_ALWAYS_SOFTWARE=1
exec xvfb-run -a -s "-screen 0 1920x1200x24" "$@"  # room for a 1920x1080 window
