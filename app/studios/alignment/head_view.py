"""Section: bertviz's head view of the decoder's cross-attention, rendered offline."""

import streamlit as st
from kit import friendly_errors, t


def section(trace, src: list[str]):
    from views.bertviz_view import head_view_html, render

    st.header(t("alignment.head_view_header"))
    st.caption(t("alignment.head_view_caption"))
    a = trace.maps["alignment"]
    with friendly_errors(t("alignment.head_view_what")):
        html = head_view_html(
            cross_attention=a.weights, encoder_tokens=src, decoder_tokens=list(a.query_labels)
        )
        render(html, height=max(400, 40 + 24 * max(len(src), len(a.query_labels))))
