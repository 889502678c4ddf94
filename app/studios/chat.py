"""Chat model: a real decoder (SmolLM2-135M-Instruct) read while it writes, offline.

One prompt at the top; each section reads the same generation. At step s of the timeline
the query is the last known token (step 1: the prompt's last token), the step appends that
token's K/V to the cache, and the model writes the next token.
"""

import streamlit as st
from kit import controls, flag, fragment, friendly_errors, page_bottom, page_top, t
from kit.errors import halt
from kit.presenter import notes, presenting
from kit.textbox import gate_text, subwords_unit, tokenizer_ends
from kit.url import url_choice, url_default, url_number, url_sync
from sections import chat as chat_sections
from state import chat as state
from studios.chat_measures import cache, causal, heads, presses, sinks, variants

from engine.text import TextLimits, template_tokens


def ask(chat) -> state.Request | None:
    """The prompt and the decoding settings, applied together by Generate (a form); None
    for a prompt over its limit (counted in ``chat``'s tokens, template included)."""
    lim, d = state.limits(), state.Request()
    area = controls()
    with area, st.form("chat-form", border=False):
        prompt = st.text_area(
            t("chat.prompt", n=lim["tokens"]),
            url_default("text", d.prompt, key="chat-text"),
            key="chat-text",
            height=90,
        )
        # The toggle beside its words and help mark: at 2 of 9 (or 3 of 10) the narrowest
        # page cut "Chat template" to "Cha…".
        c1, c2, c3, c4 = st.columns([4, 2, 3, 2])
        template = c1.toggle(
            t("chat.template"),
            url_default("template", d.template, flag, key="chat-template"),
            key="chat-template",
            help=t("chat.template_help"),
        )
        lo, hi = lim["max_new_tokens"]
        label = t("chat.max_new", lo=lo, hi=hi)
        kw = dict(key="chat-tokens")
        tokens = url_number(c2.number_input, "tokens", label, lo, hi, d.max_new_tokens, **kw)
        sampling = url_choice(
            c3.radio,
            "sampling",
            t("chat.sampling"),
            state.SAMPLINGS,
            key="chat-sampling",
            format_func=lambda s: t(f"chat.sampling_{s}"),
            horizontal=True,
        )
        seed = url_number(c4.number_input, "seed", t("chat.seed"), *lim["seed"], 0, key="chat-seed")
        temperature, top_k, top_p = sampler(lim, d)
        st.form_submit_button(t("chat.generate"), type="primary", key="chat-generate")
    reserved = template_tokens(chat.tokenizer) if template else 0
    limits = TextLimits(lim["chars"], lim["tokens"], reserved=reserved)
    ends = tokenizer_ends(chat.tokenizer)
    with area:  # under the form: a form holds no plain button (the cut)
        prompt = gate_text(
            prompt, key="chat-text", limits=limits, unit=subwords_unit(), ends=ends, form=True
        )
    url_sync(text=prompt, template=template)
    if prompt is None:
        return None
    return state.Request(
        prompt,
        template,
        int(tokens),
        sampling,
        float(temperature),
        int(top_k),
        float(top_p),
        int(seed),
    )


def sampler(lim: dict, d: state.Request) -> tuple:
    """Temperature, top-k and top-p: used when the decoding samples."""
    c5, c6, c7 = st.columns(3)
    temperature = url_number(
        c5.number_input,
        "temperature",
        t("chat.temperature"),
        *lim["temperature"],
        d.temperature,
        key="chat-temperature",
        cast=float,
        step=0.1,
    )
    top_k = url_number(
        c6.number_input, "top_k", t("chat.top_k"), *lim["top_k"], d.top_k, key="chat-top-k"
    )
    top_p = url_number(
        c7.number_input,
        "top_p",
        t("chat.top_p"),
        *lim["top_p"],
        d.top_p,
        key="chat-top-p",
        cast=float,
        step=0.05,
    )
    return temperature, top_k, top_p


def timeline(chat, trace, request) -> None:
    out = trace.outputs
    notes("chat-output").markdown(t("chat.output", text=chat_sections.inert(out["generated"])))
    if out.get("stopped"):
        st.info(t("chat.stopped", n=len(out["log_probs"])))
    ms = trace.timings
    st.caption(t("chat.timing", prefill=ms["prefill_ms"], decode=ms["decode_ms"]))
    steps(trace, chat)


@fragment
def steps(trace, chat) -> None:
    """The step slider and the figures it drives: a move reruns only this part."""
    if "generation" not in trace.maps:
        st.info(t("chat.no_steps"))
        return
    n_layers, _, n_steps, _ = trace.maps["generation"].shape
    c1, c2 = st.columns([3, 2])  # above the figures they drive, presenting too
    s = 0
    if n_steps > 1:
        s = url_number(c1.slider, "token", t("chat.step"), 1, n_steps, 1, key="chat-step") - 1
    layer = url_number(
        c2.slider, "layer", t("chat.layer"), 0, n_layers - 1, n_layers // 2, key="chat-layer"
    )
    chat_sections.draw_step(trace, chat, s, layer)


SECTIONS = {
    "timeline": timeline,
    "sinks": sinks,
    "cache": cache,
    "presses": presses,
    "heads": heads,
    "variants": variants,
    "causal": causal,
}

page_top("chat")
st.title(t("chat.title"))
st.caption(t("chat.intro"))
if not state.available():
    st.info(t("chat.missing", path=state.chat_dir()))
    page_bottom("chat")
    halt()
c = state.card_facts()  # the card states the model: the caption shows while it loads
facts = dict(layers=c["n_layers"], heads=c["n_heads"], kv=c["n_kv_heads"], d=c["head_dim"])
st.caption(t("chat.card", name=c["name"], **facts))
with friendly_errors(t("chat.what_load")):
    chat = state.wait_for_model()  # loading began in the background at the server's start
request = ask(chat)
if request is None:
    halt()  # over the limit: the box has said so and offered the cut; the form stays
with friendly_errors(t("chat.what_generate")):
    trace = state.generate(request)
section = url_choice(
    st.segmented_control,
    "section",
    t("chat.section"),
    list(SECTIONS),
    key="chat-section",
    format_func=lambda s: t(f"chat.section_{s}"),
)
if not presenting():  # presenting, the section row above names it: room for the figure
    st.header(t(f"chat.section_{section}"))
with friendly_errors(t(f"chat.what_{section}")):
    SECTIONS[section](chat, trace, request)
page_bottom(f"chat-{section}", trace, tables={"steps": lambda: state.step_rows(trace)})
