"""Section: bertviz's head view of the decoder's cross-attention, rendered offline."""

import streamlit as st
from kit import friendly_errors


def section(trace, src: list[str]):
    from views.bertviz_view import head_view_html, render

    st.header("bertviz head view of this cross-attention")
    st.caption("Decoder words on the left, source words on the right; rendered offline.")
    a = trace.maps["alignment"]
    with friendly_errors("the head view"):
        html = head_view_html(
            cross_attention=a.weights, encoder_tokens=src, decoder_tokens=list(a.query_labels)
        )
        render(html, height=max(400, 40 + 24 * max(len(src), len(a.query_labels))))
