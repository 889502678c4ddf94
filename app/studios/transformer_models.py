"""The Transformer page's model pickers: each returns (Trace, attention sinks, card name,
what the model wrote and any warning about the input), the last said by :func:`say` after
the page's controls: presenting moves the controls below the maps, and the warning belongs
above them.

Both families answer through their model cards: the card lists the models, states the
limits and examples, loads (once per process) and traces (once per input).
"""

from __future__ import annotations

from dataclasses import replace

import streamlit as st
from kit import (
    data_table,
    engine_text,
    example_and_text,
    friendly_errors,
    md_escape,
    t,
    url_choice,
    url_number,
)
from kit.errors import halt
from kit.textbox import card_limits
from state import models
from state import transformer as state

from engine.models.registry import ALLOWLIST_ENV
from engine.text import char_ends, special_tokens, tokenizer_ends, word_ends

OTHER = "other"  # the option for a directory the user types


def example_text(card, key: str, ends=word_ends, hint: str = "", **limits) -> str:
    """The example picker and the text box, counted in the model's unit under the box; a
    text over the card's limits stops the page there (the controls above stay), with
    ``hint`` said under the refusal: what the model reads, and where else to go."""
    examples = [e.input for e in card.examples]
    unit = engine_text(card.limits.token_unit)
    gate = dict(limits=replace(card_limits(card.limits), **limits), unit=unit, ends=ends)
    label = t("transformer.input")
    text = example_and_text(examples, key, t("transformer.example"), label, **gate)
    if text is None:
        if hint:
            st.info(hint)
        halt()
    return text


def show_measured(result: dict | None) -> None:
    """The evaluation numbers, their method and the command that measured them."""
    if result is None:
        return
    with st.expander(t("transformer.measured", n=result["n_test"])):
        rows = result.get("pe_ablation") or {result["pe"]: result}
        metrics = ("bleu", "exact_match", "unigram_f1")
        data_table([{"pe": pe} | {k: r[k] for k in metrics} for pe, r in rows.items()])
        if "aer" in result:
            st.markdown(t("transformer.aer_intro", name=result["checkpoint"]))
            aer = result["aer"]  # layer → head → AER: a row per head, a column per layer
            heads = list(next(iter(aer.values())))
            data_table([{"head": h} | {layer: aer[layer][h] for layer in aer} for h in heads])
        st.caption(t("transformer.measured_caption", command=result["command"]))


def ours():
    """Our encoder–decoder, trained here: a checkpoint, its facts, its translation."""
    titles = {c.name: engine_text(c.title) for c in state.ours()}  # as Compare names them
    if not titles:
        st.info(t("transformer.no_model"))
        halt()
    name = url_choice(
        st.selectbox,
        "model",
        t("transformer.checkpoint"),
        list(titles),
        key="checkpoint",
        format_func=titles.get,
        help=t("transformer.checkpoint_help"),
    )
    with friendly_errors(t("transformer.checkpoint_what")):
        card = models.card(name)
    c = card.config  # the card states the model: no loading for a caption
    facts = dict(task=card.task, pe=c["pe"], layers=c["n_layers"], heads=c["n_heads"])
    facts |= dict(d=c["d_model"], max_src=card.limits.max_tokens, max_new=card.max_new)
    facts["chars"] = f"{card.limits.max_chars:,}"
    st.caption(t("transformer.ours_caption" + ("_dates" if card.task == "dates" else ""), **facts))
    show_measured(state.measured(card.task))
    dates = card.task == "dates"  # a sentence typed here meets the date model's 38 characters
    hint = t("transformer.dates_hint", example=card.examples[0].input) if dates else ""
    text = example_text(card, name, char_ends if dates else word_ends, hint=hint)
    with friendly_errors(t("transformer.ours_what")):
        trace = models.trace(name, text)
    told = [("markdown", t("transformer.output", text=trace.outputs["translation"]))]
    if trace.outputs.get("warning"):  # far from its data: say so before any heatmap
        told.append(("warning", engine_text(trace.outputs["warning"], markdown=True)))
    elif trace.outputs["unknown"]:
        words = ", ".join(md_escape(w) for w in trace.outputs["unknown"])
        told.append(("warning", t("transformer.unknown", words=words)))
    return trace, ("<s>", "</s>"), name, told


def pretrained_name() -> str:
    """The card picked: MiniLM, an allowed model, or the directory the user types."""

    cards = state.pretrained_cards()
    shown = {c.name: c.meta["display"] for c in cards} | {OTHER: t("transformer.other")}
    choice = url_choice(
        st.selectbox,
        "model",
        t("transformer.model"),
        list(shown),
        ids=[c.meta["display"] for c in cards] + [OTHER],  # links name the directory
        key="hf-model",
        format_func=shown.get,
    )
    if choice != OTHER:
        return choice
    tip = t("transformer.local_dir_help", env=ALLOWLIST_ENV)
    return state.typed_directory(st.text_input(t("transformer.local_dir"), key="hf-path", help=tip))


def pretrained():
    """A pretrained HuggingFace model from local files: its facts, input and trace."""
    name = pretrained_name()
    with friendly_errors(t("transformer.loading_what")):
        card = models.card(name)
        limits = card.limits  # what the card states, before the model loads
        facts = dict(name=card.meta["display"], arch=card.meta["arch"])
        facts |= dict(tokens=limits.max_tokens, chars=f"{limits.max_chars:,}")
        st.caption(t("transformer.pretrained_caption", **facts))
        m = models.loaded(name)
    ends, specials = tokenizer_ends(m.tokenizer), special_tokens(m.tokenizer)
    text = example_text(card, m.display, ends, tokens=limits.max_tokens, reserved=specials)
    options = {}
    new = {p.name: p for p in card.options}.get("max_new_tokens")  # decoders only
    if new is not None:
        lo, hi = int(new.low), int(new.high)
        label = t("transformer.generate", n=hi)
        options[new.name] = url_number(
            st.slider, "new", label, lo, hi, new.default, key="hf-generate"
        )
    with friendly_errors(t("transformer.pretrained_what")):
        trace = models.trace(name, text, **options)
    told = []
    if "generated" in trace.outputs:
        how = t("transformer.how_" + ("causal" if m.arch == "decoder" else "forced"))
        told.append(
            ("markdown", t("transformer.generated", text=trace.outputs["generated"], how=how))
        )
    return trace, m.sinks, name, told


def say(told: list[tuple[str, str]]) -> None:
    """What a picker's model wrote, and its warning, outside the controls: presenting moves
    the controls below the maps, and the class saw a typed sentence's maps with the warning
    that they are not a translation of it a screen further down."""
    for kind, text in told:
        getattr(st, kind)(text)
