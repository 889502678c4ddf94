"""Positional encoding: the sinusoids of Vaswani et al. (2017, §3.5) and their rotation property."""

import streamlit as st
from kit import chart, controls, engine_text, fragment, friendly_errors, page_bottom, page_top, t
from kit.url import ints, url_choice, url_default, url_sync
from sections import claims as claims_section
from sections import positional as pe_sections
from state import transformer as tr_state
from views import positional as figs

from engine import positional as pe_lib
from engine.errors import InputError

page_top("positional")
st.title(t("positional.title"))
st.markdown(
    r"$$PE_{(pos,\,2i)} = \sin\frac{pos}{10000^{2i/d}}, \qquad "
    r"PE_{(pos,\,2i+1)} = \cos\frac{pos}{10000^{2i/d}}$$ " + t("positional.intro")
)

lo_d, hi_d = pe_lib.D_MODEL_LIMITS
lo_n, hi_n = pe_lib.LENGTH_LIMITS
c1, c2, c3 = controls().columns(3)
d_model = c1.number_input(
    t("positional.d_model", lo=lo_d, hi=hi_d),
    value=url_default("d_model", 64, int, key="pe_d_model", choices=range(lo_d, hi_d + 1, 2)),
    step=2,
    key="pe_d_model",
    help=t("positional.d_model_help"),
)
length = c2.number_input(
    t("positional.positions", lo=lo_n, hi=hi_n),
    value=url_default("length", 100, int, key="pe_length", lo=lo_n, hi=hi_n),
    key="pe_length",
)
k = c3.number_input(
    t("positional.offset"),
    value=url_default("k", 5, int, key="pe_k", lo=-pe_lib.OFFSET_LIMIT, hi=pe_lib.OFFSET_LIMIT),
    key="pe_k",
    help=t("positional.offset_help"),
)

pe = None  # a refused size draws no encoding; the section picker below stays
with friendly_errors(t("positional.what")):
    d_model, length, k = int(d_model), int(length), int(k)
    try:
        pe_lib.check_d_model(d_model)
        pe_lib.check_length(length)
        pe_lib.check_offset(k)
    except InputError as exc:
        st.info(engine_text(exc, markdown=True))
    else:
        url_sync(d_model=d_model, length=length, k=k)
        pe = pe_lib.sinusoidal(length, d_model)


def curves() -> None:
    d = sorted({d for d in (0, 1, 4, 5, d_model // 2, d_model - 1) if d < d_model})
    d = url_default("dims", d, ints, key="pe_dims", lo=0, hi=d_model - 1)
    dims = st.multiselect(
        t("positional.dims"), range(d_model), sorted(set(d))[:12], max_selections=12, key="pe_dims"
    )
    url_sync(dims=dims)
    if not dims:
        st.info(t("positional.no_dims"))
        return
    chart(figs.curves_figure(pe, dims), key="fig-curves")


def table() -> None:
    pe_sections.draw_table(pe, "fig-table")


def similarity() -> None:
    pe_sections.draw_similarity(pe, "fig-sim")


def rotation() -> None:
    pe_sections.draw_rotation(k, length, d_model, "fig-rotation")


def learned() -> None:
    with friendly_errors(t("positional.learned_what")):
        found = tr_state.learned_pe()  # the checkpoint trained with --pe learned, if shipped
    if found is None:
        st.info(t("positional.no_learned"))
        return
    name, trained = found
    n_pe, d_pe = trained.shape
    st.markdown(t("positional.learned_text", name=name, n=n_pe, d=d_pe))
    for title, tab, key in (
        (t("positional.learned_name"), trained, "trained"),
        (t("positional.sinusoidal_name"), pe_lib.sinusoidal(n_pe, d_pe), "sines"),
    ):
        col_table, col_sim = st.columns(2)
        chart(figs.table_figure(tab, f"PE {title}", 460), f"fig-pe-{key}", col_table, share=0.5)
        sim = figs.similarity_figure(
            pe_lib.cosine_similarity(tab),
            t("positional.cosine_title", name=title),
            "cos",
            diverging=True,
            height=460,
        )
        chart(sim, f"fig-pe-sim-{key}", col_sim, share=0.5)


SECTIONS = {
    "curves": curves,
    "table": table,
    "similarity": similarity,
    "rotation": rotation,
    "learned": learned,
}


# One section on screen at a time; picking another reruns only this part.
@fragment
def sections() -> None:
    section = url_choice(
        st.segmented_control,
        "section",
        t("positional.section"),
        list(SECTIONS),
        key="pe_section",
        format_func=lambda s: t(f"positional.section_{s}"),
    )
    st.header(t(f"positional.header_{section}", k=k))
    draw = SECTIONS[section]
    if pe is not None or draw is learned:  # the shipped encodings need no size
        draw()


sections()
claims_section.show("pe")  # the seed's "sin/cos is enough", against the shipped ablation
if pe is not None:  # the link and downloads of a drawn view only
    page_bottom("positional", tables={"encoding": pe})
