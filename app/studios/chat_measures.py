"""The Chat model page's measured sections: sinks, cache policies (with the eviction ledger),
what eviction loses (kvpress's presses), head types, variants, and the causal checks
(Does it matter?: the logit lens, head ablation, activation patching, the token meter).

Each takes (chat, trace, request): the loaded model, the page's generation and its request.
"""

from __future__ import annotations

import streamlit as st
from kit import chart, controls, engine_text, notes, t, table_exports
from kit.i18n import variant_title
from kit.reveal import predict, state_key
from kit.url import flag, ints, names, url_choice, url_default, url_number, url_sync
from sections import claims as claims_section
from sections.causal import draw_ablation, draw_faithful, draw_patching, pair_form
from sections.chat import draw_cut, draw_head_scores, draw_sinks, draw_sweep, draw_variants, inert
from sections.ledger import draw_ledger
from sections.presses import draw_baseline, draw_curves
from state import causal as causal_state
from state import chat as state
from state import presses as press_state
from state.ledger import ledger
from views import causal as causal_figs
from views import chat as figs
from views.presses import kept_figure, task_label

from engine.analysis import heads as head_types
from engine.errors import InputError

MEASURES = ("mass_first", "local_width", "entropy")
METRICS = ("ppl", "agreement", "kl")


def sinks(chat, trace, request) -> None:
    amap = trace.maps["prompt"]
    notes("chat-sinks").markdown(t("chat.sinks_intro"))  # presenting: below the maps
    if amap.shape[-1] < 2:
        st.info(t("chat.sinks_short"))
        return
    c1, c2 = st.columns([2, 3])  # above the figures they drive, presenting too
    first = url_number(c1.slider, "first", t("chat.sinks_first"), 1, 4, 1, key="chat-first")
    measure = url_choice(
        c2.segmented_control,
        "measure",
        t("chat.sinks_measure"),
        MEASURES,
        key="chat-measure",
        format_func=lambda m: t(f"chat.measure_{m}"),
    )
    prof = state.sink_profile(amap.weights, first)
    control = state.first_token_control(request.prompt, request.template)
    draw_sinks(prof, measure, control, chat.n_layers, chat.n_kv_heads, "chat-sinks")


def heads(chat, trace, request) -> None:
    notes("chat-heads").markdown(t("chat.heads_intro", n=state.DETECT_N))  # what it runs
    found = state.detect_heads()
    kind = url_choice(
        st.segmented_control,
        "kind",
        t("chat.heads_kind"),
        state.head_types(),
        key="chat-kind",
        default=2,
        format_func=lambda k: t(f"chat.kind_{k}"),
    )
    scores = found[kind]
    event = draw_head_scores(found, kind, chat.n_kv_heads, "chat-heads")
    ranked = state.ranked_heads(scores)
    choose_clicked(figs.clicked_head(event), "pick", f"chat-pick-{kind}")
    pick = url_choice(
        st.selectbox,
        "pick",
        t("chat.heads_pick"),
        ranked,
        key=f"chat-pick-{kind}",
        format_func=lambda p: t(
            "chat.head_name",
            at=p.replace(".", " H"),
            score=float(scores[tuple(map(int, p.split(".")))]),
        ),
    )
    layer, head = map(int, pick.split("."))
    amap = trace.maps["prompt"]
    hide = st.toggle(
        t("chat.heads_hide", token=amap.key_labels[0]),
        url_default("hide", True, flag, key="chat-hide"),
        key="chat-hide",
        help=t("chat.heads_hide_help"),
    )
    url_sync(hide=hide)
    if hide:
        amap = state.without_first(amap)
    title = t("chat.fig_head_map", layer=layer, head=head)
    fig = figs.head_map_figure(amap.weights[layer, head], amap.key_labels, title)
    chart(fig, key="chat-head-map")
    reveal(request, state.ranked_heads(found["induction"])[0])


def choose_clicked(head: str | None, param: str, key: str) -> None:
    """A head clicked in the grid becomes the list's choice (the list still leads until
    the next new click: a selection stays on the chart across reruns).

    Written to the list's session state before the list is drawn: a keyed widget shows
    its own last value in the browser whatever ``index`` says, unless the state is set.
    """
    last = f"{key}-clicked"
    if head is None or st.session_state.get(last) == head:
        return
    st.session_state[last] = head
    st.session_state[key] = head
    st.query_params[param] = head


def reveal(request, best: str) -> None:
    """Which head copies? The best induction head reads the prompt written twice; the class
    guesses where it looks from a token of the second copy, then reveals."""
    amap, n = state.repeated(request.prompt)
    if n < 3:
        st.caption(t("chat.heads_short"))
        return
    layer, head = map(int, best.split("."))
    st.markdown(t("chat.heads_reveal", layer=layer, head=head, n=n))
    labels = [label.strip() or label for label in amap.key_labels]
    weights = amap.weights[layer, head]
    found = head_types.copying_row(weights, amap.key_labels)  # asked where the head really copies
    if found is None:
        st.caption(t("chat.heads_no_copy", layer=layer, head=head))
        return
    key = state_key("chat-heads", request.prompt, best)
    if predict(key, weights, labels, labels, row=found[0], unit="word"):
        title = t("chat.fig_head_map", layer=layer, head=head)
        chart(figs.head_map_figure(weights, amap.key_labels, title), "chat-reveal-map")


def cache(chat, trace, request) -> None:
    st.markdown(t("chat.cache_intro"))
    c1, c2, c3, c4 = controls("chat-cache").columns(4)
    first, lim = state.CACHE_DEFAULT, state.limits()  # the view the server's preload computes
    name = url_choice(
        c1.selectbox,
        "policy",
        t("chat.policy"),
        lim["policy"],
        key="chat-policy",
        default=lim["policy"].index(first["name"]),
        format_func=lambda p: t(f"chat.policy_{p}"),
    )
    # An evicting policy keeps at least one of each (the card refuses 0; full needs none).
    window, sinks, budget = (
        url_number(col.number_input, k, t(f"chat.{k}"), 1, lim[k][1], first[k], key=f"chat-{k}")
        for col, k in zip((c2, c3, c4), ("window", "sinks", "budget"), strict=True)
    )
    try:
        policy = state.policy(name, window, sinks, budget)
        cut = state.generate(request, policy)
    except InputError as exc:  # a cache larger than this prompt: the sweep below still runs
        st.info(engine_text(exc, markdown=True))
    else:
        draw_cut(trace, cut, state.same_prefix(trace, cut), "chat-cache")
        if request.sampling == "greedy":  # the ledger compares greedy choices
            draw_ledger(ledger(request, policy))
    cost(request)


def presses(chat, trace, request) -> None:
    """Cache policies judged by what they lose (issue 32): the whole sweep's curves first
    (read from the shipped results: a figure at once), then one example asked live."""
    press_curves()
    press_example()


def press_example() -> None:
    """One RULER-style example from the book under one kvpress press (issue 32)."""
    st.subheader(t("chat.press_heading"))
    st.markdown(t("chat.press_intro", n=press_state.LENGTH))
    with controls("chat-press"), st.form("chat-press-form", border=False):
        c1, c2, c3, c4 = st.columns([3, 3, 2, 2])
        task = url_choice(
            c1.selectbox,
            "ptask",
            t("chat.press_task"),
            press_state.TASKS,
            key="chat-ptask",
            format_func=lambda x: t(f"chat.task_{x}"),
        )
        press = url_choice(
            c2.selectbox,
            "press",
            t("chat.press_press"),
            press_state.PRESSES,
            key="chat-press",
            default=press_state.PRESSES.index("snapkv"),
            format_func=lambda x: t(f"chat.press_{x}"),
        )
        ratio = url_choice(
            c3.select_slider,
            "ratio",
            t("chat.press_ratio"),
            press_state.RATIOS,
            key="chat-ratio",
            default=press_state.RATIOS.index(0.5),
        )
        label = t("chat.press_seed")
        seed = url_number(c4.number_input, "pseed", label, 0, 999, 0, key="chat-pseed")
        asked = st.form_submit_button(t("chat.press_run"))
    st.caption(t(f"chat.press_about_{press}", window=press_state.SNAPKV_WINDOW))
    if asked:  # in the link too: a shared view answers at once
        url_sync(ask="1")
    elif st.query_params.get("ask") != "1":
        st.caption(t("chat.press_waiting", n=press_state.LENGTH))
        return
    found = press_state.run(task, int(seed), press, float(ratio))
    full, cut = found["runs"]
    said = dict(question=inert(found["question"]), expected=", ".join(found["answers"]))
    st.markdown(t("chat.press_asked", **said))
    for row, who in ((full, t("chat.press_full")), (cut, t(f"chat.press_{press}"))):
        text = dict(who=who, answer=inert(row["answer"]) or "–", score=f"{row['score']:.2f}")
        st.markdown(t("chat.press_answer", kept=f"{row['kept']:.0%}", **text))
    chart(kept_figure(found), key="chat-press-kept")
    claims_section.show("kv_cache")  # the seed's "no KV cache → collapses", measured


def press_curves() -> None:
    """What each press loses over the whole sweep (issue 32): accuracy against compression
    per task, perplexity beside it, the full cache's baseline per task, and where perplexity
    hides a loss; read from the shipped results, so a view change costs no model run."""
    st.subheader(t("chat.curves_heading"))
    found = press_state.curves()
    if found is None:
        st.info(t("chat.curves_missing"))
        return
    tasks = found["tasks"]
    # The curves of the tasks the full cache can do (RULER's rule); the table lists all.
    keys = [k for k, s in tasks.items() if s["counts"]] or list(tasks)
    chosen = url_choice(
        st.selectbox,
        "ctask",
        t("chat.curves_task"),
        keys,
        key="chat-ctask",
        format_func=lambda k: task_label(tasks[k]),
    )
    draw_curves(tasks[chosen], press_state.hidden(tasks[chosen]), "chat-curves")
    draw_baseline(found)
    table_exports(lambda: press_state.table(found), "cache-presses")


def cost(request) -> None:
    """Agreement, KL and perplexity against the cache budget: on the user's own prompt when
    it is longer than the tokens read, else on the shipped English text (the title says)."""
    st.subheader(t("chat.sweep_heading"))
    st.markdown(t("chat.sweep_intro", interval=state.H2O_INTERVAL))
    with controls("chat-sweep"), st.form("chat-sweep-form", border=False):
        c1, c2 = st.columns([1, 2])
        (lo, hi), (n0, budgets0) = state.SWEEP_N, state.SWEEP_DEFAULT
        label = t("chat.sweep_n", lo=lo, hi=hi)
        n = url_number(c1.number_input, "n", label, lo, hi, n0, key="chat-n", step=64)
        first = url_default(
            "budgets", list(budgets0), ints, key="chat-budgets", choices=state.SWEEP_BUDGETS
        )
        budgets = c2.multiselect(
            t("chat.sweep_budgets"),
            state.SWEEP_BUDGETS,
            first,
            key="chat-budgets",
            placeholder=t("chat.sweep_no_budget"),
        )
        st.form_submit_button(t("chat.sweep_run"), key="chat-sweep-run")
    url_sync(budgets=budgets)
    if not budgets:
        st.info(t("chat.sweep_no_budget"))
        return
    own = state.own_ids(request)
    source = "own" if len(own) > n else "book"
    own = tuple(own[: int(n) + 1]) if source == "own" else None
    rows = state.sweep(int(n), tuple(sorted(budgets)), own)
    if rows and rows[0]["stopped"]:
        st.info(t("chat.sweep_stopped", n=rows[0]["n_predicted"]))
    metric = url_choice(
        st.segmented_control,
        "metric",
        t("chat.sweep_metric"),
        METRICS,
        key="chat-metric",
        format_func=lambda m: t(f"chat.metric_{m}"),
    )
    draw_sweep(rows, metric, n, "chat-sweep", source)


def variants(chat, trace, request) -> None:
    """Variants inside the chat model, run only when asked (seconds a variant): the form that
    starts the run stays above the figure it makes, also in presenter mode."""
    notes("chat-variants").markdown(t("chat.variants_intro", prompt=state.VARIANTS_PROMPT))
    titles = {v.name: variant_title(v) for v in state.variant_names()}
    with st.form("chat-variants-form", border=False):
        # The variants on a row of their own: in a column at 1024 px their names were cut.
        c2 = st.container()
        c1, c3 = st.columns(2)
        lo, hi = state.VARIANTS_N
        n = url_number(
            c1.number_input, "vn", t("chat.variants_n", lo=lo, hi=hi), lo, hi, 64, key="chat-vn"
        )
        first = url_default(
            "variants",
            list(state.VARIANTS_DEFAULT),
            names,
            key="chat-variants",
            choices=list(titles),
        )
        picked = c2.multiselect(
            t("chat.variants_pick"),
            list(titles),
            first,
            key="chat-variants",
            format_func=titles.get,
            placeholder=t("chat.variants_none"),
        )
        first = url_default("layers", [], ints, key="chat-vlayers", lo=0, hi=chat.n_layers - 1)
        layers = c3.multiselect(
            t("chat.variants_layers"),
            range(chat.n_layers),
            first,
            key="chat-vlayers",
            placeholder=t("chat.variants_all_layers"),
            help=t("chat.variants_layers_help"),
        )
        run = st.form_submit_button(t("chat.variants_run"), key="chat-variants-run")
    url_sync(variants=picked, layers=layers)
    asked = (int(n), tuple(picked), tuple(sorted(layers)))
    if run:
        st.session_state["chat-variants-asked"] = asked
    if not picked:
        st.info(t("chat.variants_none"))
    elif st.session_state.get("chat-variants-asked") != asked:
        st.info(
            t("chat.variants_press", new=state.VARIANTS_NEW)
        )  # seconds to minutes of work: only when asked
    else:
        draw_variants(state.variants(*asked), titles, "chat-variants")


# -- Does it matter? (issue 33) ------------------------------------------------------------
CHECKS = ("lens", "ablate", "patch", "faithful")


def causal(chat, trace, request) -> None:
    notes("chat-causal").markdown(t("causal.intro"))
    check = url_choice(
        st.segmented_control,
        "check",
        t("causal.check"),
        CHECKS,
        key="causal-check",
        format_func=lambda c: t(f"causal.check_{c}"),
    )
    {"lens": lens, "ablate": ablate, "patch": patch, "faithful": faithful}[check](chat, trace)


def lens(chat, trace) -> None:
    out = trace.outputs
    found = causal_state.lens(tuple(out["token_ids"]), out["n_prompt"])
    chart(causal_figs.lens_figure(found), key="causal-lens")
    st.caption(t("causal.lens_caption", last=chat.n_layers - 1))


def ablate(chat, trace) -> None:
    mode = url_choice(
        st.radio,
        "mode",
        t("causal.mode"),
        causal_state.MODES,
        key="causal-mode",
        format_func=lambda m: t(f"causal.mode_{m}"),
        horizontal=True,
        help=t("causal.mode_help"),
    )
    ids = causal_state.prompt_ids(trace)
    if len(ids) > causal_state.LIMIT:
        st.info(t("causal.too_long", n=len(ids), limit=causal_state.LIMIT))
        return
    found = causal_state.ablate(tuple(ids), mode)
    prompt_map = state.without_first(trace.maps["prompt"])
    draw_ablation(found, chat, state.detect_heads(), prompt_map, causal_state.TABLE_HEADS)


def patch(chat, trace) -> None:
    limits = (causal_state.SWEEPS, causal_state.LIMIT, causal_state.RESIDUAL)
    clean, corrupted, answer, wrong, sweep = pair_form(causal_state.Pair(), *limits)
    url_sync(clean=clean, corrupted=corrupted, answer=answer, wrong=wrong)
    found = causal_state.patch(causal_state.Pair(clean, corrupted, answer, wrong), sweep)
    draw_patching(found, chat)


def faithful(chat, trace) -> None:
    """One written token: does the attention over what came before rank those tokens as
    removing each of them (occlusion) and gradient × input do?"""
    out = trace.outputs
    p, ids, labels = out["n_prompt"], out["token_ids"], out["tokens"]
    if len(ids) == p:
        st.info(t("causal.faithful_nothing"))
        return
    c1, c2 = st.columns([3, 2])
    # The tokens' labels are the options: a new generation is a new list, not old labels kept
    written = [f"{s + 1}: {labels[p + s]}" for s in range(len(ids) - p)]
    label = t("causal.faithful_token")
    ids_ = range(len(written))
    s = written.index(
        url_choice(c1.selectbox, "written", label, written, key="causal-written", ids=ids_)
    )
    last, label = chat.n_layers - 1, t("causal.faithful_layer")
    layer = url_number(c2.slider, "read_layer", label, 0, last, last, key="causal-faithful-layer")
    if p + s > causal_state.LIMIT:
        st.info(t("causal.faithful_too_long", n=p + s, limit=causal_state.LIMIT))
        return
    found = causal_state.faithful(tuple(ids[: p + s]), ids[p + s])
    caption = t(
        "causal.faithful_caption_chat",
        output=inert(found.output),
        log_p=f"{found.value:.2f}",
        n=len(found.tokens),
        seconds=f"{found.seconds:.0f}",
    )
    draw_faithful(found, layer, caption, key="causal-faithful")
