"""The Alignment page's check before translating, and its vocabulary section.

Before the models read a sentence: each typed word marked known or unknown to the en→fr
grammar, the construction covered or not, replacements from the grammar that one click
applies, and a button to the section listing the grammar's words (with their French) and
its sentence patterns. ``engine.data.coverage`` decides all of it; this module draws it.
"""

import streamlit as st
from kit import data_table, fragment, md_escape, t, url_choice, url_default, url_sync
from kit.presenter import presenting
from state import nmt as state
from views.alignment_html import coverage_html

SECTION_KEY = "nmt-section"  # the page's section picker


def coverage_panel(text: str, key: str) -> None:
    """The typed words marked, the construction's verdict and the replacements on offer;
    ``key`` is the text box's, so a replacement rewrites what was typed."""
    cov = state.coverage(text)
    if not cov.words or (cov.covered and presenting()):
        return  # on a projector the figure comes first; a covered sentence needs no note
    st.html(coverage_html(cov.words, t("alignment.word_known"), t("alignment.word_unknown")))
    if cov.covered:
        names = ", ".join(t(f"alignment.pattern_{p}") for p in cov.patterns)
        st.success(t("alignment.covered", patterns=names))
    elif not cov.unknown:
        tokens = cov.tokens
        word = (
            md_escape(tokens[cov.read]) if cov.read < len(tokens) else t("alignment.sentence_end")
        )
        st.info(t("alignment.not_covered", read=cov.read, total=len(tokens), word=word))
    replacements(cov, key)
    st.button(t("alignment.browse"), key="nmt-browse", on_click=_browse)


def replacements(cov, key: str) -> None:
    """One row per unknown word: its replacements as buttons, best first; then the whole
    replaced sentence as one button, when every unknown word has a replacement (or only
    punctuation the grammar writes otherwise changes): one click, and it translates."""
    offered = [(i, w) for i, w in enumerate(cov.words) if not w.known and w.suggestions]
    if cov.unknown:
        st.info(t("alignment.unknown_before", n=len(cov.unknown)))
    for i, w in offered:
        cols = st.columns([3, 3, 3, 3, 4], gap="small")  # the last column keeps them close
        cols[0].markdown(f"“{md_escape(w.text)}” →")
        for k, s in enumerate(w.suggestions):
            cols[k + 1].button(
                s.text or t("alignment.remove_word"),
                key=f"nmt-fix-{i}-{k}",
                help=t(f"alignment.how_{s.how}"),
                on_click=_replace,
                args=(key, cov.tokens, i, s.text),
            )
    if cov.complete and cov.replaced() != cov.tokens:
        whole = state.sentence(cov.replaced())
        st.button(
            t("alignment.one_click", sentence=md_escape(whole)),
            key="nmt-fix-all",
            help=t("alignment.one_click_help"),
            type="primary",
            on_click=_set,
            args=(key, whole),
        )


def _replace(key: str, tokens, i: int, text: str) -> None:
    _set(key, state.sentence([*tokens[:i], *text.split(), *tokens[i + 1 :]]))


def _set(key: str, text: str) -> None:
    st.session_state[key] = text


def _browse() -> None:
    st.session_state[SECTION_KEY] = vocabulary.__name__  # a section's id is its function's name


# Filtering the list reruns this section only.
@fragment
def vocabulary(card, trace, text: str, beam: int) -> None:
    """Every word of the grammar with its French, and its sentence patterns with examples."""
    st.header(t("alignment.vocabulary_header"))
    c1, c2 = st.columns([2, 1])
    key = "nmt-vocab-query"
    query = c1.text_input(
        t("alignment.vocabulary_search"), url_default("find", "", key=key), key=key
    )
    url_sync(find=query or None)
    parts = ["all", *state.parts()]
    part = url_choice(
        c2.selectbox,
        "part",
        t("alignment.vocabulary_part"),
        parts,
        format_func=lambda p: t(f"alignment.part_{p}"),
        key="nmt-vocab-part",
    )
    part = None if part == "all" else part
    entries = state.vocabulary(query, part)
    st.caption(t("alignment.vocabulary_caption", n=len(entries)))
    rows = [
        {
            t("alignment.col_en"): e.en,
            t("alignment.col_forms"): e.forms,
            t("alignment.col_fr"): e.fr,
            t("alignment.col_part"): t(f"alignment.part_{e.part}"),
        }
        for e in entries
    ]
    data_table(rows, height=320)
    st.subheader(t("alignment.patterns_header"))
    st.caption(t("alignment.patterns_caption"))
    data_table(
        [
            {
                t("alignment.col_pattern"): t(f"alignment.pattern_{p.id}"),
                t("alignment.col_template"): p.template,
                t("alignment.col_example_en"): state.sentence(p.example.src),
                t("alignment.col_example_fr"): state.fr_sentence(p.example.tgt),
            }
            for p in state.patterns()
        ],
    )
