"""Downloads: figures, a view's data, its Trace, and all of it with the link in one zip.

- Figures download from the camera button in each figure's toolbar, drawn by Plotly in the
  browser as PNG or SVG (the format chosen in the page's export row): no server-side
  renderer (kaleido is not installed) and no network.
- A Trace downloads as JSON and NPZ, the format ``engine.trace.Trace`` reads back.
- A view's data (its tables, or every attention weight of its Trace in long form) as CSV
  and JSON.
- "Download this view" zips the figures as Plotly JSON, the Trace, the data and the link.

Every file is written when its button is clicked, not on every rerun: a Transformer Trace
with its queries and keys is megabytes.
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from collections.abc import Callable

import streamlit as st

from kit.fonts import flag_spans, wrap_lines
from kit.i18n import t
from kit.presenter import QUALITATIVE, presenting, restyle

IMAGE_FORMATS = ("png", "svg")
FORMAT_KEY = "kit-image-format"
FIGURES_KEY = "kit-figures"

Rows = list[dict] | Callable[[], list[dict]] | object  # or a 2-D numpy array


def image_format() -> str:
    chosen = st.session_state.get(FORMAT_KEY)
    return chosen if chosen in IMAGE_FORMATS else IMAGE_FORMATS[0]


def _file_stem(name: str) -> str:
    return re.sub(r"[^\w.-]+", "-", name).strip("-") or "figure"


def plot_config(name: str) -> dict:
    """Plotly's config: the toolbar camera saves ``name`` in the chosen format, at 2× for PNG."""
    fmt = image_format()
    return {
        "displaylogo": False,
        "toImageButtonOptions": {
            "format": fmt,
            "filename": _file_stem(name),
            "scale": 2 if fmt == "png" else 1,
        },
    }


def chart(fig, key: str, where=None, *, share: float | None = None, **kwargs):
    """``st.plotly_chart`` for every figure of the studio: palettes, export config, bundle.

    ``where`` is a column or container to draw in (``st`` by default); ``share``, the part
    of the page's width that column has (its title is wrapped to it). Returns what
    ``st.plotly_chart`` returns (the selection event when ``on_select`` is given).
    """
    fig = styled(fig, presenting())
    if where is not None:
        fig = in_column(fig, share)
    st.session_state.setdefault(FIGURES_KEY, {})[key] = fig
    if fig.layout.width and "width" not in kwargs:  # laid out for its width: not stretched
        kwargs["width"] = "content"  # (Streamlit keeps it within the column)
    return (where or st).plotly_chart(fig, key=key, config=plot_config(key), **kwargs)


COLUMN_GAP_PX = 48  # a column's title: the gap beside it and the title's own left pad


def in_column(fig, share: float | None = None):
    """A figure drawn in a column: its title wrapped again to the column's width, from what
    views.heatmap.figure kept in ``meta``. ``share``: the column's part of the page (less
    its gap); without it, presenting, the narrowest page's width (a projector's column is
    about that), and on a screen the title as it was (the narrowest page's already). At
    1024 px with the sidebar open a title wrapped to the page ran off a column's edge."""
    meta = fig.layout.meta
    if not (isinstance(meta, dict) and "title" in meta):
        return fig
    title, rest = meta["title"], {k: v for k, v in meta.items() if k != "title"}
    # Once only (the meta goes): a figure drawn twice must not grow twice.
    fig.layout.meta = rest or None
    if share is not None:
        px = min(title["page_px"] * share - COLUMN_GAP_PX, title["column_px"])
    elif presenting():
        px = title["column_px"]
    else:
        return fig
    wrapped, lines = wrap_lines(title["src"], px, title["size"])
    more = 24 * max(0, lines - title["lines"])
    fig.update_layout(
        title_text=flag_spans(wrapped, title["flag_px"]),
        margin_t=(fig.layout.margin.t or 0) + more,
    )
    if fig.layout.height:
        fig.update_layout(height=fig.layout.height + more)
    return fig


def styled(fig, present: bool):
    """The figure as this mode draws it: restyled for a projector; on a screen, lines and
    groups left uncoloured take the studio's colours, not the theme's paired shades."""
    if present:
        return restyle(fig)
    if fig.layout.colorway is None:
        fig.layout.colorway = QUALITATIVE
    return fig


class LazyFigure:
    """A figure the export bundle builds when it is downloaded (it calls ``to_json``)."""

    def __init__(self, build: Callable[[], object], present: bool = False):
        self.build, self.present = build, present

    def to_json(self) -> str:
        fig = self.build()
        return styled(fig, self.present).to_json()


def html_chart(markup: str, key: str, figure: Callable[[], object]) -> None:
    """A figure drawn as HTML on screen (far lighter for the browser than Plotly), exported
    in the view's bundle as its Plotly twin, built only if the bundle is downloaded."""
    st.session_state.setdefault(FIGURES_KEY, {})[key] = LazyFigure(figure, presenting())
    st.html(markup)


def reset_figures() -> None:
    """Forget the figures of the previous run (a page's full run starts afresh)."""
    st.session_state[FIGURES_KEY] = {}


def trace_rows(trace) -> list[dict]:
    """Every attention weight of a Trace in long form: map, layer, head, query, key, weight."""
    rows = []
    for name, m in trace.maps.items():
        n_layers, n_heads, n_q, n_k = m.shape
        layers = m.layer_labels or tuple(str(i) for i in range(n_layers))
        heads = m.head_labels or tuple(str(i) for i in range(n_heads))
        for li in range(n_layers):
            for hi in range(n_heads):
                w = m.weights[li, hi]
                for qi in range(n_q):
                    for ki in range(n_k):
                        rows.append(
                            {
                                "map": name,
                                "layer": layers[li],
                                "head": heads[hi],
                                "query": m.query_labels[qi],
                                "key": m.key_labels[ki],
                                "weight": float(w[qi, ki]),
                            }
                        )
    return rows


def _rows(rows: Rows) -> list[dict]:
    """Rows of a table: a list of dicts, a function returning one, or a 2-D array."""
    rows = rows() if callable(rows) else rows
    if hasattr(rows, "ndim") and rows.ndim == 2:  # a matrix: one row per row, one column each
        return [
            {"row": i, **{str(j): float(v) for j, v in enumerate(r)}} for i, r in enumerate(rows)
        ]
    return rows


def csv_text(rows: list[dict]) -> str:
    import pandas as pd

    buf = io.StringIO()
    pd.DataFrame(rows).to_csv(buf, index=False)
    return buf.getvalue()


def json_text(rows: list[dict]) -> str:
    return json.dumps(rows, default=str, indent=1, ensure_ascii=False)


def traces(trace) -> dict:
    """A view's Traces by file stem: ``trace`` for one, ``trace-<name>`` for each of a
    side-by-side view's (a dict name → Trace), so a colleague gets every model shown."""
    if trace is None:
        return {}
    if isinstance(trace, dict):
        return {f"trace-{_file_stem(name)}": one for name, one in trace.items()}
    return {"trace": trace}


def bundle(figures: dict, link: str, trace=None, tables: dict[str, Rows] | None = None) -> bytes:
    """The zip of one view: figures/*.json, trace.json + trace.npz (one pair per Trace of a
    side-by-side view), data/*, link.txt."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("link.txt", link + "\n")
        z.writestr("README.txt", t("exports.readme") + "\n")
        for key, fig in list(figures.items()):
            z.writestr(f"figures/{_file_stem(key)}.json", fig.to_json())
        for name, one in traces(trace).items():
            z.writestr(f"{name}.json", one.to_json())
            z.writestr(f"{name}.npz", one.to_npz())
        for name, rows in (tables or {}).items():
            data = _rows(rows)
            z.writestr(f"data/{_file_stem(name)}.csv", csv_text(data))
            z.writestr(f"data/{_file_stem(name)}.json", json_text(data))
    return buf.getvalue()


def file_size(n: int) -> str:
    """A file's size as a button states it: "12 kB", "0.3 MB", "34 MB" (a small trace
    read "0.0 MB", as if the file were empty)."""
    if n < 100_000:
        return f"{max(1, round(n / 1e3))} kB"
    mb = n / 1e6
    return f"{mb:.1f} MB" if mb < 10 else f"{mb:,.0f} MB"


def export_buttons(trace, stem: str) -> None:
    """Download the Trace as JSON and NPZ: the same format the engine reads back."""
    c1, c2 = st.container(key=f"kit-exports-{_file_stem(stem)}").columns(2)
    size = trace.export_bytes()  # from the shapes: the file is written only when clicked
    c1.download_button(
        t("kit.download_trace_json", size=file_size(size)),
        trace.to_json,
        f"{stem}.json",
        mime="application/json",
        key=f"dl-json-{stem}",
        on_click="ignore",
    )
    c2.download_button(
        t("kit.download_trace_npz", size=file_size(size)),
        trace.to_npz,
        f"{stem}.npz",
        mime="application/octet-stream",
        key=f"dl-npz-{stem}",
        on_click="ignore",
    )


def table_exports(rows: Rows, stem: str) -> None:
    """CSV and JSON downloads of one table, written when clicked (hidden while presenting)."""
    c1, c2 = st.container(key=f"kit-exports-{_file_stem(stem)}").columns(2)
    c1.download_button(
        t("kit.download_csv"),
        lambda: csv_text(_rows(rows)),
        f"{stem}.csv",
        mime="text/csv",
        key=f"csv-{stem}",
        on_click="ignore",
    )
    c2.download_button(
        t("kit.download_json"),
        lambda: json_text(_rows(rows)),
        f"{stem}.json",
        mime="application/json",
        key=f"json-{stem}",
        on_click="ignore",
    )


def view_exports(stem: str, link: str, trace=None, tables: dict[str, Rows] | None = None) -> None:
    """The export row of a page: figure format, the view's zip, its Trace and its data."""
    shown = traces(trace)
    if shown and not tables:
        tables = {
            f"attention{name[len('trace') :]}": (lambda one=one: trace_rows(one))
            for name, one in shown.items()
        }
    figures = st.session_state.setdefault(FIGURES_KEY, {})
    with st.container(key="kit-exports"):
        st.subheader(t("exports.heading"))
        c1, c2 = st.columns([2, 3])
        c1.segmented_control(
            t("exports.image_format"),
            IMAGE_FORMATS,
            default=IMAGE_FORMATS[0],
            format_func=str.upper,
            required=True,
            key=FORMAT_KEY,
            help=t("exports.image_help"),
        )
        with c2:
            st.download_button(
                t("exports.bundle"),
                lambda: bundle(figures, link, trace, tables),
                f"{stem}-view.zip",
                mime="application/zip",
                key="kit-bundle",
                on_click="ignore",
                type="primary",
            )
            st.caption(t("exports.bundle_help"))
        for name, one in shown.items():
            export_buttons(one, f"{stem}-{name}")
        for name, rows in (tables or {}).items():
            table_exports(rows, f"{stem}-{name}")
