"""Positional encoding: the sinusoids of Vaswani et al. (2017, §3.5) and their rotation property."""

import streamlit as st
from kit import friendly_errors, url_default, url_sync
from views import positional as figs

from engine import positional as pe_lib

LEARNED_PE = "transformer-enfr-learned"

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
    key="pe_d_model",
    help="Must be even: the dimensions come in sin/cos pairs.",
)
length = c2.number_input(
    f"positions ({lo_n}–{hi_n})", value=url_default("length", 100, int), key="pe_length"
)
k = c3.number_input(
    "offset k for the rotation check",
    value=url_default("k", 5, int),
    key="pe_k",
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


@st.cache_data(max_entries=2, show_spinner=False)
def learned_table(name: str):
    from engine.models.transformer import learned_positional_encoding

    return learned_positional_encoding(name)  # [n_positions, d_model]


def curves() -> None:
    default_dims = {d for d in (0, 1, 4, 5, d_model // 2, d_model - 1) if d < d_model}
    dims = st.multiselect(
        "Dimensions to plot", list(range(d_model)), default=sorted(default_dims), max_selections=12
    )
    st.plotly_chart(figs.curves_figure(pe, dims), key="fig-curves")


def table() -> None:
    st.caption(
        "Positions down, dimensions across: fast clocks on the left, slow ones on the right."
    )
    st.plotly_chart(figs.table_figure(pe, "PE"), key="fig-table")


def similarity() -> None:
    st.caption(
        "The dot product of two encodings depends only on their distance |i − j|: "
        "near positions look alike, and the similarity falls off with distance."
    )
    sim = pe_lib.similarity(pe)
    st.plotly_chart(figs.similarity_figure(sim, "PE(i) · PE(j)", "dot", height=520), key="fig-sim")


def rotation() -> None:
    err = pe_lib.verify_rotation(k, length, d_model)
    st.markdown(
        f"For each frequency ω_i the pair (sin, cos) at pos + k is the pair at pos turned by "
        f"the angle k·ω_i, so PE(pos + k) = M_k · PE(pos) with M_k block-diagonal and **the "
        f"same for every position**. Checked numerically over the {length} positions above: "
        f"the largest |PE(pos+k) − M_k PE(pos)| is **{err:.2e}** (floating-point round-off)."
    )
    show = min(d_model, 16)
    M = pe_lib.rotation(k, d_model)[:show, :show]
    st.plotly_chart(figs.rotation_figure(M, k), key="fig-rotation")


def learned() -> None:
    with friendly_errors("the learned positional encoding"):
        table = learned_table(LEARNED_PE)
    n_pe, d_pe = table.shape
    st.markdown(
        f"The en-fr Transformer trained with `--pe learned` (checkpoint `{LEARNED_PE}`) has "
        f"one free vector per position, {n_pe} positions × d_model {d_pe}. Top row: what "
        "training made of them, and the cosine similarity between positions; bottom row: the "
        "sinusoids of the same shape. The sinusoidal similarity depends only on |i − j| by "
        "construction, the learned one only as far as training found it useful."
    )
    for title, tab, key in (
        ("learned (trained)", table, "learned"),
        ("sinusoidal", pe_lib.sinusoidal(n_pe, d_pe), "sines"),
    ):
        col_table, col_sim = st.columns(2)
        col_table.plotly_chart(figs.table_figure(tab, f"PE {title}", 460), key=f"fig-pe-{key}")
        sim = figs.similarity_figure(
            pe_lib.cosine_similarity(tab),
            f"cosine similarity, {title}",
            "cos",
            diverging=True,
            height=460,
        )
        col_sim.plotly_chart(sim, key=f"fig-pe-sim-{key}")


SECTIONS = {
    "Sine and cosine curves": curves,
    "The full table": table,
    "Similarity PE · PEᵀ": similarity,
    "Rotation by k": rotation,
    "Learned, beside the sinusoidal": learned,
}
HEADERS = {
    "Rotation by k": f"PE(pos + {k}) is a rotation of PE(pos)",
    "Learned, beside the sinusoidal": "Learned positional encoding, beside the sinusoidal",
}


# One section on screen at a time; picking another reruns only this part.
@st.fragment
def sections() -> None:
    names = list(SECTIONS)
    section = st.segmented_control("Section", names, default=names[0], key="pe_section")
    section = section or names[0]
    st.header(HEADERS.get(section, section))
    SECTIONS[section]()


sections()
