"""Positional encoding: the sinusoids of Vaswani et al. (2017, §3.5) and their rotation property."""

import numpy as np
import plotly.graph_objects as go
import streamlit as st
from kit import friendly_errors, url_default, url_sync
from views.heatmap import FONT, heatmap

from engine import positional as pe_lib

st.title("Positional encoding")
st.markdown(
    r"PE(pos, 2i) = sin(pos / 10000^{2i/d}),  PE(pos, 2i+1) = cos(pos / 10000^{2i/d}). "
    "Each pair of dimensions is a clock turning at its own speed; together they give every "
    "position a unique fingerprint."
)

lo_d, hi_d = pe_lib.D_MODEL_LIMITS
lo_n, hi_n = pe_lib.LENGTH_LIMITS
c1, c2, c3 = st.columns(3)
d_model = c1.number_input(
    f"d_model (even, {lo_d}–{hi_d})",
    value=url_default("d_model", 64, int),
    step=2,
    help="Must be even: the dimensions come in sin/cos pairs.",
)
length = c2.number_input(f"positions ({lo_n}–{hi_n})", value=url_default("length", 100, int))
k = c3.number_input(
    "offset k for the rotation check",
    value=url_default("k", 5, int),
    help="Any integer, negative too.",
)

with friendly_errors("the positional encoding"):
    d_model, length, k = int(d_model), int(length), int(k)
    pe_lib.check_d_model(d_model)
    pe_lib.check_length(length)
    if abs(k) > 100_000:
        raise ValueError("keep |k| at or below 100,000")
    url_sync(d_model=d_model, length=length, k=k)
    pe = pe_lib.sinusoidal(length, d_model)

max_dim = d_model - 1
default_dims = [d for d in (0, 1, 4, 5, d_model // 2, max_dim) if d <= max_dim]
dims = st.multiselect(
    "Dimensions to plot", list(range(d_model)), default=sorted(set(default_dims)), max_selections=12
)

st.header("Sine and cosine curves")
fig = go.Figure()
pos = np.arange(length)
for d in dims:
    kind = "sin" if d % 2 == 0 else "cos"
    fig.add_scatter(x=pos, y=pe[:, d], mode="lines", name=f"dim {d} ({kind}, i={d // 2})")
fig.update_layout(
    xaxis_title="position",
    yaxis_title="PE",
    font=FONT,
    height=420,
    margin=dict(l=10, r=10, t=30, b=10),
)
st.plotly_chart(fig, key="fig-curves")

st.header("The full table")
st.caption("Positions down, dimensions across: fast clocks on the left, slow ones on the right.")
st.plotly_chart(
    heatmap(
        pe,
        [f"d{i}" for i in range(d_model)],
        [str(p) for p in pos],
        title="PE",
        x_title="dimension",
        y_title="position",
        value_name="PE",
        diverging=True,
        annotate=False,
        height=520,
    ),
    key="fig-table",
)

st.header("Similarity PE · PEᵀ")
st.caption(
    "The dot product of two encodings depends only on their distance |i − j|: "
    "near positions look alike, and the similarity falls off with distance."
)
sim = pe_lib.similarity(pe)
labels = [str(p) for p in pos]
st.plotly_chart(
    heatmap(
        sim,
        labels,
        labels,
        title="PE(i) · PE(j)",
        x_title="position j",
        y_title="position i",
        value_name="dot",
        annotate=False,
        height=520,
    ),
    key="fig-sim",
)

st.header(f"PE(pos + {k}) is a rotation of PE(pos)")
err = pe_lib.verify_rotation(k, length, d_model)
st.markdown(
    f"For each frequency ω_i the pair (sin, cos) at pos + k is the pair at pos turned by the "
    f"angle k·ω_i, so PE(pos + k) = M_k · PE(pos) with M_k block-diagonal and **the same for "
    f"every position**. Checked numerically over the {length} positions above: the largest "
    f"|PE(pos+k) − M_k PE(pos)| is **{err:.2e}** (floating-point round-off)."
)
show = min(d_model, 16)
M = pe_lib.rotation(k, d_model)[:show, :show]
st.plotly_chart(
    heatmap(
        M,
        [f"d{i}" for i in range(show)],
        [f"d{i}" for i in range(show)],
        title=f"M_{k}, first {show} dimensions (2×2 rotation blocks)",
        x_title="input dim",
        y_title="output dim",
        value_name="M",
        diverging=True,
        annotate=show <= 8,
    ),
    key="fig-rotation",
)


# -- The Transformer studio's trained, learned positional encoding (issue 4) ----------------
st.header("Learned positional encoding, beside the sinusoidal")
LEARNED_PE = "transformer-enfr-learned"
with friendly_errors("the learned positional encoding"):
    from engine.models.transformer import learned_positional_encoding

    learned = learned_positional_encoding(LEARNED_PE)  # [n_positions, d_model]
    n_pe, d_pe = learned.shape
    sines = pe_lib.sinusoidal(n_pe, d_pe)
    st.markdown(
        f"The en-fr Transformer trained with `--pe learned` (checkpoint `{LEARNED_PE}`) has one "
        f"free vector per position, {n_pe} positions × d_model {d_pe}. Top row: what training "
        "made of them, and the cosine similarity between positions; bottom row: the sinusoids "
        "of the same shape. The sinusoidal similarity depends only on |i − j| by construction, "
        "the learned one only as far as training found it useful."
    )

    def cosine(x: np.ndarray) -> np.ndarray:
        unit = x / np.linalg.norm(x, axis=1, keepdims=True)
        return unit @ unit.T

    pos_labels = [str(p) for p in range(n_pe)]
    dim_labels = [f"d{i}" for i in range(d_pe)]
    for title, table, key in (
        ("learned (trained)", learned, "learned"),
        ("sinusoidal", sines, "sines"),
    ):
        col_table, col_sim = st.columns(2)
        col_table.plotly_chart(
            heatmap(
                table,
                dim_labels,
                pos_labels,
                title=f"PE {title}",
                x_title="dimension",
                y_title="position",
                value_name="PE",
                diverging=True,
                annotate=False,
                height=460,
            ),
            key=f"fig-pe-{key}",
        )
        col_sim.plotly_chart(
            heatmap(
                cosine(table),
                pos_labels,
                pos_labels,
                title=f"cosine similarity, {title}",
                x_title="position j",
                y_title="position i",
                value_name="cos",
                diverging=True,
                annotate=False,
                height=460,
            ),
            key=f"fig-pe-sim-{key}",
        )
