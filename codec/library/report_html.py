"""The library as one self-contained HTML page: totals, the worst clips, two plots, the joints
that most often set the error, and every row in a sortable, filterable table.

Self-contained on purpose: it is mailed around and opened from build artefacts, often
offline, so the plots are inline SVG drawn here, the style and the few lines of script that
sort the table are inline, and nothing is fetched from anywhere (no fonts, no scripts, no
images by URL).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from html import escape
from typing import Any

import numpy as np

from codec.library.outputs import budget_share, worst_rows
from codec.library.rows import COLUMNS, NUMERIC, Row, is_error, totals

W, H = 460, 300  # plot size in px
PAD_L, PAD_R, PAD_T, PAD_B = 64, 14, 12, 44
OK_COLOUR, NEAR_COLOUR, OVER_COLOUR = "#8a8f96", "#f08a1c", "#e41a1f"


def _colour(row: Row) -> str:
    """Grey under half the budget, orange up to it, red over it: the window's scale's stops."""
    if not row["precision_met"]:
        return OVER_COLOUR
    return NEAR_COLOUR if budget_share(row) >= 0.5 else OK_COLOUR


def _ticks(lo: float, hi: float, log: bool) -> list[float]:
    if log:
        return [10.0**e for e in range(math.floor(lo), math.ceil(hi) + 1)]
    span = hi - lo or 1.0
    step = 10 ** math.floor(math.log10(span / 4))
    for m in (1, 2, 5, 10):
        if span / (step * m) <= 6:
            step *= m
            break
    first = math.ceil(lo / step) * step
    return [first + i * step for i in range(int((hi - first) / step) + 1)]


def _fmt(v: float) -> str:
    return f"{v:.3g}" if v and (abs(v) >= 1e4 or abs(v) < 1e-2) else f"{v:g}"


def scatter_svg(
    xs: Sequence[float],
    ys: Sequence[float],
    colours: Sequence[str],
    titles: Sequence[str],
    x_label: str,
    y_label: str,
    log_x: bool = False,
    log_y: bool = False,
) -> str:
    """An inline SVG scatter plot; log axes take log10 of positive values (others dropped)."""
    x = np.asarray(xs, dtype=np.float64)
    y = np.asarray(ys, dtype=np.float64)
    keep = np.isfinite(x) & np.isfinite(y) & ((x > 0) | (not log_x)) & ((y > 0) | (not log_y))
    x, y = x[keep], y[keep]
    idx = np.flatnonzero(keep)
    if log_x:
        x = np.log10(x)
    if log_y:
        y = np.log10(y)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
        f'viewBox="0 0 {W} {H}" role="img" aria-label="{escape(y_label)} against '
        f'{escape(x_label)}">',
        f'<rect x="{PAD_L}" y="{PAD_T}" width="{W - PAD_L - PAD_R}" '
        f'height="{H - PAD_T - PAD_B}" fill="#fafafa" stroke="#bbb"/>',
    ]
    if len(x) == 0:
        parts.append(f'<text x="{W / 2}" y="{H / 2}" text-anchor="middle">no data</text></svg>')
        return "".join(parts)
    x0, x1 = _range(x, log_x)
    y0, y1 = _range(y, log_y)

    def px(v: np.ndarray | float) -> Any:
        return PAD_L + (np.asarray(v) - x0) / (x1 - x0) * (W - PAD_L - PAD_R)

    def py(v: np.ndarray | float) -> Any:
        return H - PAD_B - (np.asarray(v) - y0) / (y1 - y0) * (H - PAD_T - PAD_B)

    for t in _ticks(x0, x1, log_x):
        v = math.log10(t) if log_x else t
        if x0 <= v <= x1:
            X = float(px(v))
            parts.append(
                f'<line x1="{X:.1f}" y1="{PAD_T}" x2="{X:.1f}" y2="{H - PAD_B}" stroke="#e4e4e4"/>'
                f'<text x="{X:.1f}" y="{H - PAD_B + 14}" text-anchor="middle">{_fmt(t)}</text>'
            )
    for t in _ticks(y0, y1, log_y):
        v = math.log10(t) if log_y else t
        if y0 <= v <= y1:
            Y = float(py(v))
            parts.append(
                f'<line x1="{PAD_L}" y1="{Y:.1f}" x2="{W - PAD_R}" y2="{Y:.1f}" stroke="#e4e4e4"/>'
                f'<text x="{PAD_L - 4}" y="{Y + 4:.1f}" text-anchor="end">{_fmt(t)}</text>'
            )
    for X, Y, i in zip(px(x), py(y), idx, strict=True):
        parts.append(
            f'<circle cx="{X:.1f}" cy="{Y:.1f}" r="3.2" fill="{colours[i]}" '
            f'stroke="#fff" stroke-width="0.6"><title>{escape(titles[i])}</title></circle>'
        )
    parts.append(
        f'<text x="{(PAD_L + W - PAD_R) / 2}" y="{H - 8}" text-anchor="middle">'
        f"{escape(x_label)}</text>"
        f'<text transform="translate(14 {(PAD_T + H - PAD_B) / 2}) rotate(-90)" '
        f'text-anchor="middle">{escape(y_label)}</text></svg>'
    )
    return "".join(parts)


def _range(v: np.ndarray, log: bool) -> tuple[float, float]:
    lo, hi = float(v.min()), float(v.max())
    if hi - lo < 1e-12:
        lo, hi = (
            lo - (0.5 if log else abs(lo) * 0.1 + 1e-9),
            hi + (0.5 if log else abs(hi) * 0.1 + 1e-9),
        )
    margin = (hi - lo) * 0.05
    return lo - margin, hi + margin


def joint_counts(rows: list[Row], top: int = 15) -> list[tuple[str, int]]:
    """The joints that set the clip's max error most often across the library."""
    return Counter(r["worst_joint"] for r in rows if not is_error(r)).most_common(top)


_STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;background:#fff}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:24px 0 8px}
.meta{color:#666}.plots{display:flex;flex-wrap:wrap;gap:24px}
svg text{font:11px sans-serif;fill:#444}
table{border-collapse:collapse;font-size:12.5px}
th,td{padding:3px 8px;border-bottom:1px solid #e6e6e6;text-align:left;white-space:nowrap}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
th{background:#f2f2f2;cursor:pointer;position:sticky;top:0;user-select:none}
th.sorted-asc::after{content:" \\25B2"}th.sorted-desc::after{content:" \\25BC"}
tr.over td{background:#fde4e4}tr.err td{background:#f1f1f1;color:#777}
.totals td{padding:2px 14px 2px 0;border:0}.bar{fill:#5b7fa6}
input{font:inherit;padding:3px 6px;margin-bottom:8px;width:320px}
"""

_SCRIPT = """
(function(){
 var t=document.getElementById('rows'),b=t.tBodies[0],hs=t.tHead.rows[0].cells;
 function key(c,num){var v=c.getAttribute('data-v');if(v===null)v=c.textContent;
  if(num){var f=parseFloat(v);return isNaN(f)?-Infinity:f;}return v.toLowerCase();}
 for(var i=0;i<hs.length;i++)(function(i){hs[i].onclick=function(){
  var num=hs[i].classList.contains('n'),asc=!hs[i].classList.contains('sorted-asc');
  for(var j=0;j<hs.length;j++)hs[j].classList.remove('sorted-asc','sorted-desc');
  hs[i].classList.add(asc?'sorted-asc':'sorted-desc');
  var rs=Array.prototype.slice.call(b.rows);
  rs.sort(function(x,y){var a=key(x.cells[i],num),c=key(y.cells[i],num);
   return (a<c?-1:a>c?1:0)*(asc?1:-1);});
  rs.forEach(function(r){b.appendChild(r);});};})(i);
 var f=document.getElementById('filter');f.oninput=function(){var q=f.value.toLowerCase();
  Array.prototype.forEach.call(b.rows,function(r){
   r.style.display=r.textContent.toLowerCase().indexOf(q)<0?'none':'';});};
})();
"""

_NUMERIC_COLUMNS = frozenset(NUMERIC)  # right-aligned, sorted by number


def _cell(key: str, value: Any) -> str:
    if value is None:
        return '<td class="n" data-v=""></td>' if key in _NUMERIC_COLUMNS else "<td></td>"
    if key in _NUMERIC_COLUMNS:
        if isinstance(value, float):
            text = f"{value:.4g}" if key != "compression_ratio" else f"{value:.2f}"
        else:
            text = f"{value:,}"
        return f'<td class="n" data-v="{value!r}">{text}</td>'
    if isinstance(value, bool):
        return f"<td>{'yes' if value else 'NO'}</td>"
    return f"<td>{escape(str(value))}</td>"


def library_html(
    rows: list[Row],
    title: str,
    meta: dict[str, Any] | None = None,
    sweep: list[dict[str, Any]] | None = None,
) -> str:
    """The whole page as text."""
    t = totals(rows)
    ok = [r for r in rows if not is_error(r)]
    titles = [f"{r['path']} [{r['animation']}]" for r in ok]
    colours = [_colour(r) for r in ok]
    size_plot = scatter_svg(
        [r["duration"] for r in ok],
        [r["compressed_size"] for r in ok],
        colours,
        titles,
        "duration (s)",
        "compressed size (bytes)",
        log_x=True,
        log_y=True,
    )
    ratio_plot = scatter_svg(
        [r["max_error"] for r in ok],
        [r["compression_ratio"] for r in ok],
        colours,
        titles,
        "max error (cm)",
        "compression ratio",
        log_x=True,
    )
    out = [
        "<!DOCTYPE html><html lang=en><head><meta charset=utf-8>",
        # nothing may load from anywhere: the page forbids it itself
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">",
        f"<title>{escape(title)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{escape(title)}</h1>",
    ]
    if meta:
        out.append(
            '<p class="meta">'
            + " &middot; ".join(f"{escape(str(k))}: {escape(str(v))}" for k, v in meta.items())
            + "</p>"
        )
    out.append("<h2>Totals</h2><table class=totals>")
    for label, value in (
        ("clips", f"{t['clips']:,}"),
        ("compressed", f"{t['compressed']:,}"),
        ("errors", f"{t['errors']:,}"),
        ("missed their precision", f"{t['precision_missed']:,}"),
        ("raw size", f"{t['raw_size']:,} B"),
        ("compressed size", f"{t['compressed_size']:,} B"),
        ("ratio", f"{t['compression_ratio']:.2f} : 1"),
        ("duration", f"{t['duration']:.1f} s"),
        ("largest error", f"{t['max_error']:.6g} cm"),
    ):
        out.append(f"<tr><td>{label}</td><td><b>{value}</b></td></tr>")
    out.append("</table>")
    if sweep:
        out.append("<h2>Precision sweep</h2><table><tr>")
        out.append("<th>precision (cm)</th><th>compressed</th><th>ratio</th><th>missed</th>")
        out.append("<th>errors</th></tr>")
        for s in sweep:
            st = s["totals"]
            out.append(
                f"<tr><td>{s['precision']:g}</td><td class=n>{st['compressed_size']:,} B</td>"
                f"<td class=n>{st['compression_ratio']:.2f}</td>"
                f"<td class=n>{st['precision_missed']}</td><td class=n>{st['errors']}</td></tr>"
            )
        out.append("</table>")
    out.append("<h2>Worst clips</h2><table><tr><th>clip</th><th>animation</th>")
    out.append("<th class=n>error / budget</th><th class=n>max error</th><th>joint</th></tr>")
    for r in worst_rows(rows)[:10]:
        cls = ' class="over"' if not r["precision_met"] else ""
        out.append(
            f"<tr{cls}><td>{escape(r['path'])}</td><td>{escape(str(r['animation']))}</td>"
            f"<td class=n>{budget_share(r):.1%}</td><td class=n>{r['max_error']:.4g} cm</td>"
            f"<td>{escape(r['worst_joint'])}</td></tr>"
        )
    out.append("</table>")
    out.append("<h2>Plots</h2><div class=plots>")
    out.append(f"<figure>{size_plot}<figcaption>size against duration</figcaption></figure>")
    out.append(f"<figure>{ratio_plot}<figcaption>ratio against max error</figcaption></figure>")
    out.append("</div>")
    out.append(_joints_html(joint_counts(rows)))
    errors = [r for r in rows if is_error(r)]
    if errors:
        out.append(f"<h2>Errors ({len(errors)})</h2><ul>")
        out += [f"<li>{escape(str(r['error']))}</li>" for r in errors]
        out.append("</ul>")
    out.append("<h2>Every clip</h2>")
    out.append('<input id=filter placeholder="filter rows" aria-label="filter rows">')
    out.append('<div style="overflow-x:auto"><table id=rows><thead><tr>')
    out += [f"<th{' class=n' if k in _NUMERIC_COLUMNS else ''}>{k}</th>" for k in COLUMNS]
    out.append("</tr></thead><tbody>")
    for r in rows:
        cls = ' class="err"' if is_error(r) else (' class="over"' if not r["precision_met"] else "")
        out.append(f"<tr{cls}>" + "".join(_cell(k, r.get(k)) for k in COLUMNS) + "</tr>")
    out.append(f"</tbody></table></div><script>{_SCRIPT}</script></body></html>\n")
    return "\n".join(out)


def _joints_html(counts: list[tuple[str, int]]) -> str:
    """A bar per joint: how many clips' max error it set."""
    if not counts:
        return ""
    top = max(c for _, c in counts)
    rows = len(counts)
    h = 18 * rows + 8
    bars = []
    for i, (name, c) in enumerate(counts):
        y = 4 + 18 * i
        w = 260 * c / top
        bars.append(
            f'<text x="176" y="{y + 12}" text-anchor="end">{escape(name[:28])}</text>'
            f'<rect class="bar" x="182" y="{y}" width="{w:.1f}" height="13"/>'
            f'<text x="{186 + w:.1f}" y="{y + 12}">{c}</text>'
        )
    return (
        "<h2>Joints that most often set the error</h2>"
        f'<svg xmlns="http://www.w3.org/2000/svg" width="480" height="{h}" '
        f'viewBox="0 0 480 {h}">' + "".join(bars) + "</svg>"
    )
