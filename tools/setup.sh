#!/usr/bin/env bash
# One-shot set-up: system packages (Debian/Ubuntu), then .venv with the project and its test extras.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES="xvfb xauth libgl1 libegl1 libgl1-mesa-dri libglx-mesa0 libegl-mesa0 libglib2.0-0
libdbus-1-3 libfontconfig1 libfreetype6 fonts-dejavu-core libxkbcommon0 libxkbcommon-x11-0
libx11-xcb1 libxcb-cursor0 libxcb-icccm4 libxcb-image0 libxcb-keysyms1 libxcb-randr0
libxcb-render-util0 libxcb-shape0 libxcb-xfixes0 libxcb-xkb1 libxcb-sync1 libxcb-shm0 libxcb-glx0
libassimp5 chromium"
# libassimp5: the tests' independent FBX reader (tests/codec/formats/assimp_reference.py),
# checked against our ufbx-based reader; Shellscope itself does not need it.
# chromium: the tests open the library's HTML report in headless Chromium (no network).
# nodejs + npm (only when node is missing): Khronos glTF-Validator, below.
command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || APT_PACKAGES="$APT_PACKAGES nodejs npm"

missing=()
if command -v dpkg-query >/dev/null 2>&1; then
    for p in $APT_PACKAGES; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
fi
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ]; then SUDO=""
    elif sudo -n true 2>/dev/null; then SUDO="sudo -n"
    else
        echo "Missing system packages. Run:" >&2
        echo "  sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
        exit 1
    fi
    echo "Installing system packages: ${missing[*]}"
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -q
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e ".[test]"
# Khronos glTF-Validator (npm), pinned, into .venv/npm: the tests check every lossy glTF
# export with it (tests/codec/formats/gltf_validator.py), offline once it is installed
GLTF_VALIDATOR=2.0.0-dev.3.10
if ! grep -qs "\"version\": \"$GLTF_VALIDATOR\"" .venv/npm/node_modules/gltf-validator/package.json; then
    npm install --prefix .venv/npm --no-save --no-package-lock --no-audit --no-fund --loglevel=error \
        "gltf-validator@$GLTF_VALIDATOR"
fi
# compile the codec's kernels once now (numba caches them next to the sources), so the first
# compression of a fresh checkout does not wait for the compiler
.venv/bin/python -m codec warm-up
