"""A lesson step's view, drawn inline from the step's link: one function per page a deck can
show (the keys of VIEWS are the pages' url names, as in the link).

The same state calls and drawing as the pages (app/state, app/sections, app/views), with
the step's parameters in place of the pages' widgets.
"""

from __future__ import annotations

import json

import streamlit as st
from kit import answer_heading, chart, data_table, engine_text, friendly_errors, t
from kit.errors import PageError
from kit.i18n import md_escape
from kit.knobs import by_variant
from kit.reveal import predict
from sections import chat as chat_sections
from sections import positional as pe_sections
from sections import presses as press_sections
from sections import retrieval as rag_sections
from sections import variants as var_sections
from sections.alignment import measured_table, soft_alignment, without_attention
from sections.faithfulness import draw_retrieval
from sections.memory import draw_hops
from state import causal as causal_state
from state import chat as chat_state
from state import faithfulness as faithful
from state import lessons as lesson_state
from state import models
from state import nmt as nmt_state
from state import presses as press_state
from state import retrieval as rag_state
from state import variants as var_state
from state.memn2n import answer, chosen, stories
from views import ioi as ioi_figs
from views import presses as press_figs
from views import variants as var_figs
from views.heatmap import map_figure
from views.transformer import head_grid

from engine import positional as pe_lib


def _card(name: str, family: str):
    card = models.card(name)  # an unknown model is an InputError: a calm note, not a trace
    if card.family != family:
        raise PageError(t("lessons.wrong_family", model=name, family=family))
    return card


def _option(card, name: str):
    """The default the card states for one of its options (the beam width, …)."""
    return next(p.default for p in card.options if p.name == name)


def _after_guess(guess, key: str, weights, rows, columns, **kw):
    """Where the step's figure goes: inline when the step asks nothing; else nowhere until
    the reveal (None), then a slot above the guess box, so a revealed map is on a
    projector's first screen with the verdict below it."""
    slot = st.container()
    if guess is None:
        return slot
    return slot if predict(key, weights, rows, columns, **kw) else None


def _unknown(trace) -> None:
    if trace.outputs["unknown"]:
        st.warning(t("lessons.unknown", words=", ".join(map(md_escape, trace.outputs["unknown"]))))


def alignment(params: dict, guess, key: str) -> None:
    with friendly_errors(t("lessons.the_view")):
        card = _card(params["model"], "nmt")
        beam = int(params.get("beam", _option(card, "beam")))
        trace = nmt_state.translate(card.name, params["text"], beam)
    answer_heading(trace, md_escape(trace.outputs["translation"]))
    st.caption(t("lessons.model_line", title=engine_text(card.title), beam=beam))
    _unknown(trace)
    if params.get("section") == "measured":
        measured_table(nmt_state.measured(card.task), card.evaluate_command)
        return
    if "alignment" not in trace.maps:
        without_attention(nmt_state.measured(card.task), t("lessons.no_attention"), f"{key}-bleu")
        return
    a = trace.maps["alignment"]
    where = _after_guess(guess, key, a.weights[0, 0], a.query_labels, a.key_labels, row=guess)
    if where is None:
        return
    en_fr = card.task == "en-fr"
    drawn = st.session_state.get("nmt-drawn", [])  # sentences drawn on the Alignment page
    scored = nmt_state.on_gold(card.name, trace, drawn) if en_fr else None
    with where:
        soft_alignment(a, trace.inputs["tokens"], scored, gold_expected=en_fr)


def transformer(params: dict, guess, key: str) -> None:
    with friendly_errors(t("lessons.the_view")):
        card = _card(params["model"], "transformer")
        trace = models.trace(card.name, params["text"])
        kind = params.get("attention", "cross")
        amap = trace.maps[kind]
        n_layers, n_heads = amap.shape[:2]
        layer = int(params.get("layer", n_layers - 1))
        head = int(params.get("head", 0))
        if layer >= n_layers or head >= n_heads:
            raise PageError(t("lessons.no_head", layers=n_layers, heads=n_heads))
    answer_heading(trace, md_escape(trace.outputs["translation"]))
    st.caption(engine_text(card.title, markdown=True))
    _unknown(trace)
    w = amap.weights[layer, head]
    where = _after_guess(guess, key, w, amap.query_labels, amap.key_labels, row=guess)
    if where is None:
        return
    if params.get("section") == "grid":
        chart(head_grid(amap, kind), f"{key}-grid", where, width="stretch")
    else:
        chart(map_figure(amap, layer, head), f"{key}-head", where, width="stretch")


def memory(params: dict, guess, key: str) -> None:
    with friendly_errors(t("lessons.the_view")):
        if "text" in params:  # story lines, the question on the last line
            name = params.get("model") or models.default("babi", "memn2n")
            trace = models.trace(name, params["text"])
        else:
            task = int(params.get("task", 1))
            name = params.get("model") or chosen(task)
            trace = answer(name, stories(task)[int(params.get("story", 0))])
    out, amap = trace.outputs, trace.maps["memory"]
    verdict = ""
    if out.get("expected"):
        verdict = t("lessons.right" if out["expected"] == out["answer"] else "lessons.wrong")
    question, said = md_escape(trace.inputs["question"]), md_escape(out["answer"])
    p = out["probability"]
    st.markdown(t("lessons.qa", question=question, answer=said, p=p, verdict=verdict, model=name))
    if out.get("warning"):
        st.warning(engine_text(out["warning"], markdown=True))
    rows = [t("lessons.hop", n=i + 1) for i in range(amap.shape[0])]
    weights, asked = amap.weights[:, 0, 0, :], None if guess is None else int(guess) - 1
    where = _after_guess(guess, key, weights, rows, amap.key_labels, row=asked, unit="sentence")
    if where is None:
        return
    with where:
        draw_hops(amap, out["candidates"], out["probabilities"], out["support"])


def positional(params: dict, guess, key: str) -> None:
    k = int(params.get("k", 5))
    d_model, length = int(params.get("d_model", 64)), int(params.get("length", 100))
    with friendly_errors(t("lessons.the_view")):
        pe_lib.check_d_model(d_model)
        pe_lib.check_length(length)
        pe = pe_lib.sinusoidal(length, d_model)
    section = params.get("section", "rotation")  # the page's own section functions
    if section == "table":
        pe_sections.draw_table(pe, f"{key}-table")
    elif section == "similarity":
        pe_sections.draw_similarity(pe, f"{key}-sim")
    else:
        pe_sections.draw_rotation(k, length, d_model, f"{key}-rotation")


def variants(params: dict, guess, key: str) -> None:
    names = tuple(params.get("variants", "longformer,performer").split(","))
    if params["section"] == "long":
        _memory(names, int(params.get("n", 8192)))
        return
    text = params.get("text", "The quick brown fox jumps over the lazy dog .")
    with friendly_errors(t("lessons.the_view")):
        picked = tuple(n for n in names if n != "full")
        traces, rows = var_state.compare(
            source="text",
            text=text,
            synthetic=(0, "clustered", 1.0, 0),
            names=picked,
            params_json=json.dumps(by_variant(params.get("hp", "")), sort_keys=True),
            causal=False,
            heads=2,
            d=32,
        )
    cols = ("variant", "rel_error", "top5_overlap", "missed_mass")
    data_table([{c: r.get(c) for c in cols + ("note",)} for r in rows])  # "–" where unscored
    head = int(params.get("head", 0))
    # The lab's own grid: panels laid out for the page's width, titles translated.
    order = [var_state.FULL, *(n for n in traces if n != var_state.FULL)]
    panels, _ = var_state.compare_panels(traces, order, "maps", head)
    var_sections.draw_maps(panels, key)
    said = dict.fromkeys(tr.maps["attention"].note for tr in traces.values())
    st.caption(" · ".join(var_figs.data_text(engine_text(n)) for n in said if n))


def _memory(names: tuple[str, ...], n: int) -> None:
    with friendly_errors(t("lessons.the_view")):
        rows = lesson_state.memory_at(names, n)
    headers = [t(f"lessons.mem_{c}") for c in rows[0]]
    data_table([dict(zip(headers, r.values(), strict=True)) for r in rows])
    full = next((r for r in rows if r["variant"] == "full"), None)
    if full:
        st.markdown(
            t(
                "lessons.mem_full",
                n=n,
                square=n * n * 4 / 2**20,
                mib=full["measured_mib"],
                gib=full["layer_gib"],
                heads=lesson_state.HEADS_IN_A_LAYER,
            )
        )


def chat(params: dict, guess, key: str) -> None:
    if params.get("section") == "presses":
        presses(params, guess, key)
        return
    if params.get("section") == "causal" and params.get("heads"):
        ioi(params, guess, key)
        return
    with friendly_errors(t("lessons.the_view")):
        shown = chat_state.lesson(params)
    chat_sections.draw_lesson(shown, key)


def ioi(params: dict, guess, key: str) -> None:
    """Heads that read the IOI prompt's names, beside what patching each one does (the
    shipped IOI evaluation); with ``guess`` the class first picks the head it expects to
    matter most, and the effects come after the reveal."""
    heads = tuple(tuple(int(x) for x in h.split(".")) for h in params["heads"].split(","))
    with friendly_errors(t("lessons.the_view")):
        found = lesson_state.ioi(causal_state.IOI_CLEAN, heads)  # the page's patching pair
    if found is None:
        st.info(t("lessons.ioi_missing"))
        return
    names = [f"L{layer} H{head}" for layer, head in heads]
    effects = ioi_figs.effects_figure(found["effects"], names, found["n_pairs"])
    # On a projector's first screen: what the heads do where nothing is guessed, else the
    # guess (the patterns it asks about follow it, the effects once revealed).
    weights, slot = [[abs(e) for e in found["effects"]]], st.container()
    revealed = guess is None or predict(
        key, weights, [t("lessons.ioi_row")], names, row=0, unit="head"
    )
    if revealed:
        with slot:
            chart(effects, key=f"{key}-fx")
    chart(ioi_figs.reads_figure(found["rows"], found["tokens"], names), key=f"{key}-reads")
    st.markdown(t("lessons.ioi_caption", written=md_escape(found["written"])))  # projected


def presses(params: dict, guess, key: str) -> None:
    """The press sweep's curves for one task (measured, read from the shipped results); with
    ``guess`` (a ratio) the class first picks the press it expects to keep the needle there."""
    found = press_state.curves()
    if found is None:
        st.info(t("chat.curves_missing"))
        return
    tasks = found["tasks"]
    name = params.get("ctask", next(iter(tasks)))
    if name not in tasks:
        st.info(t("lessons.no_task", task=name, tasks=", ".join(tasks)))
        return
    task = tasks[name]
    slot = st.container()  # revealed, the curves come above the guess: on the first screen
    if guess is not None:
        ratios, names, grid = press_figs.accuracy_at(task)
        if not predict(key, grid, ratios, names, row=str(guess), unit="press"):
            return
    with slot:
        press_sections.draw_curves(task, press_state.hidden(task), key)


def retrieval(params: dict, guess, key: str) -> None:
    with friendly_errors(t("lessons.the_view")):
        shown = rag_state.lesson(params, md_escape)
    if params.get("section") == "faithfulness" and "trace" in shown:
        needed(shown["trace"], guess, key)
        return
    rag_sections.draw_lesson(shown, key)


def needed(trace, guess, key: str) -> None:
    """Which passage does the answer need? With ``guess`` the class picks one first; the
    reveal names the passage whose removal lowers log p(answer) most, then the meter."""
    why = faithful.cannot_drop(trace)
    if why:
        st.info(why)
        return
    with friendly_errors(t("lessons.the_view")):
        meter = faithful.retrieval(trace)
    if meter is None:
        st.info(t("faithfulness.stopped"))
        return
    passages = [f"{p['text']}" for p in trace.outputs["passages"]]
    st.markdown(t("lessons.written", text=md_escape(trace.outputs["answer"])))
    row, slot = [t("lessons.needed_row")], st.container()  # revealed: the meter on top
    if guess is not None:
        if not predict(key, [meter["found"].delta], row, passages, row=0, unit="passage"):
            return
    with slot:
        draw_retrieval(meter, trace, f"{key}-meter")


VIEWS = {
    "alignment": alignment,
    "transformer": transformer,
    "memory": memory,
    "positional": positional,
    "variants": variants,
    "chat": chat,
    "retrieval": retrieval,
}
