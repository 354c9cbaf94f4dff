"""What each document listener costs on the UI thread per edit, in the real window, with no
compression running beside it: results are computed first, then each edit is a settings edit
(every settings listener), its result (every result listener) and the frames after it.

    bash tools/with_display.sh .venv/bin/python bench/handler_costs.py [--edits N]
        [--kind global|joint] [--clips 0,1,2]

bench/profile_edits.py times the same listeners while a compression runs on its worker thread,
which takes the GIL from the UI thread every few milliseconds (sys.setswitchinterval), so its
figures include waits that belong to the worker and vary with the machine's load; here they
are the listeners' own. Medians over the edits, in ms; listeners under 0.05 ms are left out.
"""

from __future__ import annotations

import argparse
import collections
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from PySide6 import QtCore, QtWidgets  # noqa: E402

TIMES: dict[str, list[float]] = collections.defaultdict(list)


def instrument() -> None:
    """Time every listener of the document's signals, by its owner's class."""
    import window_edits as we

    from app.model import document as docmod

    def emit(self, *args):  # type: ignore[no-untyped-def]
        for slot in list(self._slots):
            name = we.slot_name(slot)
            t = time.perf_counter()
            slot(*args)
            TIMES[name].append(1e3 * (time.perf_counter() - t))

    docmod.Signal.emit = emit


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--edits", type=int, default=9)
    parser.add_argument("--kind", choices=("joint", "global"), default="global")
    parser.add_argument("--clips", default="0,1,2", help="indices into window_edits' clips")
    args = parser.parse_args()
    QtCore.QCoreApplication.setAttribute(QtCore.Qt.ApplicationAttribute.AA_ShareOpenGLContexts)
    app = QtWidgets.QApplication(sys.argv[:1])
    app.setOrganizationName("ShellscopeBench")
    app.setApplicationName("ShellscopeBench")
    import window_edits as we

    import codec
    from app.controller import Controller
    from app.main_window import MainWindow
    from app.model.document import Document
    from codec.compression import Compression
    from codec.tuning import set_joint_override

    def cancelled(*_a: object, **_k: object) -> None:
        raise codec.Cancelled("results are computed up front")

    def settle() -> None:
        for _ in range(10):
            app.processEvents()

    instrument()
    for idx in (int(i) for i in args.clips.split(",")):
        joints, path = we.CLIPS[idx]
        clip = codec.load_clip(path)
        doc = Document()
        controller = Controller(doc, compress=cancelled)
        window = MainWindow(doc, controller, remember_layout=False)
        window.resize(1280, 800)
        window.show()
        settle()
        controller.open_clip(clip)
        compression = Compression(clip)
        j = joints // 2
        tunings = []  # (settings, rules) of every edit, the first one the start
        for i in range(args.edits + 1):
            value = round(0.006 + 0.0007 * i, 6)
            if args.kind == "global":
                tunings.append((replace(doc.settings, precision=value), ()))
            else:
                name = clip.skeleton.names[j]
                tunings.append((doc.settings, set_joint_override((), name, precision=value)))
        results = []
        for settings, rules in tunings:
            doc.set_tuning(settings, rules)
            cs = doc.settings.compression_settings(codec=doc.codec, has_mesh=bool(clip.meshes))
            skeleton = doc.compression_input().skeleton  # type: ignore[union-attr]
            results.append(compression.run(cs, skeleton=skeleton))
        doc.set_tuning(*tunings[0])
        doc.set_result(results[0])
        settle()
        per: dict[str, list[float]] = collections.defaultdict(list)
        for (settings, rules), result in zip(tunings[1:], results[1:], strict=True):
            TIMES.clear()
            t0 = time.perf_counter()
            doc.set_tuning(settings, rules)
            t1 = time.perf_counter()
            doc.set_result(result)
            t2 = time.perf_counter()
            for k, v in TIMES.items():
                per[k].append(sum(v))
            per["(the edit: every settings listener)"].append(1e3 * (t1 - t0))
            per["(its result: every result listener)"].append(1e3 * (t2 - t1))
            settle()
        print(f"\n== {path.name} ({joints} joints), {args.kind} edits x{args.edits}, medians ms")
        for k in sorted(per):
            m = statistics.median(per[k])
            if m >= 0.05:
                print(f"  {k:52} {m:6.2f}  (max {max(per[k]):6.2f})")
        window.close()


if __name__ == "__main__":
    main()
