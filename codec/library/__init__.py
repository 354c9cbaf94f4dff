"""The studio library: every clip of a folder tree compressed and measured, a row each, on Dask.

A studio tunes project defaults for thousands of clips and then hunts the clips that break
them. `python -m codec library DIR` (codec.cli.library) and File > Open Library in the window
both drive `engine.run_library`: files are found (`discover`), their tuning resolved
(`tuning`: global settings, a rules file, per-clip sidecars), rows already known are taken
from the cache (`cache`, keyed by file hash, settings and codec version), the rest are
compressed on a Dask cluster (`job` runs in the workers) with every failure a row of its own,
and the rows are written as JSON, CSV or an HTML page (`outputs`, `report_html`), compared
with an older run (`compare`) or swept over precisions. Qt-free.
"""
