"""The USD reader's child process: usd-core reads the file and hands back the clip's arrays.

Run as `python -m codec.formats.usd_worker`; codec.formats.usd starts it (through
codec.formats.reader_process), never a user. Why a separate process: usd-core is a C++
library that a hostile file can crash (a stack overflow on 50,000 nested prims), abort
("FATAL ERROR: Dereferenced an invalid SdfPrimSpec") or make allocate gigabytes; here that
only ends this process. Protocol: see codec.formats.reader_process; the request carries
"mode" ("list" | "read" | "write"), "name" (the user's path, for messages and the sandbox
folder), "path" (null when the bytes follow), "animation", "sample_rate", "units"; a
"write" request (codec.formats.usd_lossy) sends a clip's .npz as the bytes, with "out" and
"source", and is answered with the written file's bytes.
"""

from __future__ import annotations

import io
import json
import os
import sys
import warnings

import numpy as np

# what codec.formats.reader_zygote imports once, before it forks a child per file
PRELOAD = (
    "pxr.Ar",
    "pxr.Gf",
    "pxr.Sdf",
    "pxr.Tf",
    "pxr.Usd",
    "pxr.UsdGeom",
    "pxr.UsdSkel",
    "pxr.Vt",
    "codec.formats.clip_arrays",
    "codec.formats.usd",
    "codec.formats.usd_crate",
    "codec.formats.usd_lossy",
)


def _answer(request: dict, data: bytes | None) -> bytes:
    from codec.formats.clip_arrays import clip_to_npz
    from codec.formats.usd import list_usd_in_process, read_usd_in_process

    # relative paths in an in-memory layer (a .usda.xz) resolve against the working folder:
    # make it the clip's own, the sandbox codec.formats.usd checks every reference against
    name = os.path.abspath(request["name"])
    os.chdir(os.path.dirname(name))
    if request["mode"] == "write":
        from codec.formats.usd_lossy import usd_answer

        assert data is not None
        return usd_answer(request, data)
    if request["mode"] == "list":
        buf = io.BytesIO()
        np.savez(buf, skeletons=np.array(list_usd_in_process(name, data=data), dtype=str))
        return buf.getvalue()
    clip = read_usd_in_process(
        name,
        animation=request.get("animation"),
        sample_rate=request.get("sample_rate"),
        units=request.get("units"),
        data=data,
    )
    return clip_to_npz(clip)


def _first_line(e: BaseException) -> str:
    lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
    return " ".join((lines[-1] if lines else "").split())[:200]


def main() -> None:
    from codec.errors import ClipFormatError, ClipValidationError
    from codec.formats.reader_process import EXIT_BAD_FILE, child_message

    warnings.simplefilter("ignore")  # numpy's RuntimeWarnings would only be stderr noise
    code = 0
    try:
        request = json.loads(sys.stdin.buffer.readline())
        data = sys.stdin.buffer.read() if request.get("path") is None else None
        out = _answer(request, data)
        sys.stdout.buffer.write(out)
    except ClipFormatError as e:
        where = f"line {e.line}: " if e.line is not None else ""
        where = f"byte {e.offset}: " if e.offset is not None and not where else where
        child_message(where + e.message)
        code = EXIT_BAD_FILE
    except MemoryError:
        child_message("too large to read into memory")
        code = EXIT_BAD_FILE
    except RecursionError:
        child_message("nested too deeply to read")
        code = EXIT_BAD_FILE
    except UnicodeDecodeError:
        child_message("holds a name or string that is not UTF-8 text")
        code = EXIT_BAD_FILE
    except (ClipValidationError, ValueError) as e:
        child_message(_first_line(e) or type(e).__name__)
        code = EXIT_BAD_FILE
    except Exception as e:  # usd-core raising on a malformed value (a Quatd that is not one)
        child_message(f"usd-core cannot read a value of it ({type(e).__name__}: {_first_line(e)})")
        code = EXIT_BAD_FILE
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # no teardown: usd-core's static destructors can crash on a bad stage


if __name__ == "__main__":
    main()
