"""The Chat model page's parts drawn: one generation step, the sinks, a cache policy's cut
and sweep, a head type's grid, the variants inside the model, and a lesson step's view.

The page and a lesson step share these; the figures come from views.chat. Model and user
text goes into Markdown through :func:`inert`.
"""

from __future__ import annotations

import streamlit as st
from kit import chart, data_table
from kit.i18n import engine_text, md_escape, t
from views.chat import (
    cache_figure,
    gqa_figure,
    head_grid_figure,
    kept_figure,
    layer_head_figure,
    lines_figure,
    sink_keys,
    step_layers_figure,
    sweep_figure,
    top_figure,
    variants_figure,
)
from views.style import visible_label


def inert(text: str) -> str:
    """Model or user text made inert in st.markdown (no links, HTML or formatting); line
    breaks and special tokens such as ``<|im_end|>`` stay visible as they are."""
    return md_escape(text).replace("\n", "↵ ")


def draw_step(trace, chat, s: int, layer: int, key: str = "chat-step") -> None:
    """Generation step ``s`` (0-based): what the query read, per layer and per head of
    ``layer`` in its KV group, the next-token candidates and the cache so far."""
    amap, out = trace.maps["generation"], trace.outputs
    n_keys, tokens = out["n_prompt"] + s, out["tokens"]
    query, written = tokens[n_keys - 1], tokens[n_keys]  # quoted: a leading space is kept
    st.markdown(
        t(
            "chat.step_label",
            s=s + 1,
            n=amap.shape[2],
            query=inert(query),
            keys=n_keys,
            written=inert(written),
        )
    )
    mean = amap.mean_over_heads()[:, s, :n_keys]
    keys, sink = sink_keys(amap.key_labels[:n_keys], mean)
    title = t("chat.fig_mean_title", heads=chat.n_heads)
    chart(step_layers_figure(mean, keys, title), key=f"{key}-layers")
    if sink is not None:
        # Body text: presenting hides captions, and a class reads a bright first word as meaning.
        st.markdown(t("chat.sink_note", token=inert(amap.key_labels[0]), share=sink))
    rows = amap.weights[layer, :, s, :n_keys]  # full width: a key per column needs the room
    title = t("chat.fig_gqa_title", layer=layer, heads=chat.n_heads, groups=chat.n_kv_heads)
    chart(gqa_figure(rows, keys, chat.n_kv_heads, title), f"{key}-gqa")
    chart(top_figure(out["top"][s], written, t("chat.fig_top_title", query=query)), f"{key}-top")
    kv_n, kv_b = out["kv_tokens"], out["kv_bytes"]
    st.markdown(
        t(
            "chat.kv_formula",
            layers=chat.n_layers,
            kv=chat.n_kv_heads,
            d=chat.head_dim,
            b=chat.dtype_bytes,
            n=kv_n[s],
            mib=kv_b[s] / 2**20,
        )
    )
    chart(cache_figure(kv_n, kv_b, s, t("chat.fig_cache_title")), key=f"{key}-cache")


def draw_sinks(prof: dict, measure: str, control: dict, n_layers: int, n_kv_heads: int, key: str):
    """The sink measure per layer × head, and StreamingLLM's first-token-by-layer figure
    for the prompt as written and with its first token replaced."""
    title = t(f"chat.fig_{measure}_title", n=prof["first"], q=prof["n_queries"])
    zmax = 1.0 if measure == "mass_first" else None
    grid = layer_head_figure(prof[measure], n_kv_heads, title, t(f"chat.unit_{measure}"), zmax=zmax)
    chart(grid, key=f"{key}-grid")
    first, replaced = control["tokens"]
    lines = {
        # a blank token named as the text below names it (↵): raw, the legend read
        # "first token replaced by" and nothing
        t("chat.sinks_original", token=visible_label(first)): control["original"],
        t("chat.sinks_replaced", token=visible_label(replaced)): control["replaced"],
    }
    fig = lines_figure(
        range(n_layers),
        lines,
        t("chat.fig_first_title"),
        t("chat.fig_layer"),
        t("chat.fig_first_y"),
        y_range=(0, 1),
    )
    chart(fig, key=f"{key}-first")
    moved = [i for i, m in enumerate(control["moved"]) if m]
    st.markdown(
        t(
            "chat.sinks_control",
            first=inert(first),
            replaced=inert(replaced),
            moved=len(moved),
            layers=n_layers,
            which=", ".join(f"L{i}" for i in moved) or "—",
        )
    )


def draw_cut(full, cut, same: int, key: str) -> None:
    """The continuation with the full cache beside the one under a policy, and what the
    policy's cache held at each step."""
    left, right = st.columns(2)
    left.markdown(t("chat.cache_full", text=inert(full.outputs["generated"])))
    name = t(f"chat.policy_{cut.outputs['policy']['name']}")
    right.markdown(t("chat.cache_cut", policy=name, text=inert(cut.outputs["generated"])))
    n = len(full.outputs["log_probs"])
    st.caption(t("chat.cache_same", n=same, of=n, prompt=full.outputs["n_prompt"]))
    out = cut.outputs
    chart(kept_figure(out["kept"], out["tokens"], t("chat.fig_kept_title")), key=f"{key}-kept")


def draw_sweep(rows: list[dict], metric: str, n: int, key: str, source: str = "book") -> None:
    """The cache-policy sweep: one measure against the budget, and every number in a table;
    the title names the text read (``source``: the user's prompt, or the book)."""
    names = {p: t(f"chat.policy_{p}") for p in ("full", "window", "sinks", "h2o")}
    title = t(f"chat.fig_sweep_title_{source}", n=rows[0]["n_predicted"] if rows else n)
    chart(sweep_figure(rows, metric, names, names["full"], title), key=key)
    data_table(rows)


def draw_head_scores(found: dict, kind: str, n_kv_heads: int, key: str):
    """The layer × head grid of one head type; returns the chart's selection event."""
    if kind == "retrieval":  # measured on needles, not on repeated random tokens
        title = t("chat.fig_heads_retrieval", n=found["retrieval_n"])
    else:
        title = t("chat.fig_heads_title", kind=t(f"chat.kind_{kind}"), n=found["n"])
    grid = head_grid_figure(found[kind], n_kv_heads, title, t("chat.fig_score"))
    return chart(grid, key=f"{key}-grid", on_select="rerun", selection_mode="points")


def draw_variants(results: dict, titles: dict[str, str], key: str) -> None:
    """Perplexity and continuation of each variant inside the model beside full attention;
    a variant that cannot be causal says why instead."""
    ran = [r for r in results.values() if r["runs"]]
    for r in results.values():
        if not r["runs"]:
            st.caption(
                t(
                    "chat.variants_refused",
                    title=titles[r["variant"]],
                    reason=engine_text(r["reason"], markdown=True),
                )
            )
    if not ran:
        return
    first = ran[0]
    st.markdown(
        t(
            "chat.variants_prompt",
            prompt=inert(first["prompt"]),
            full=inert(first["continuation_full"]),
            ppl=first["ppl_full"],
            n=first["n_tokens"],
        )
    )
    chart(variants_figure(ran, titles), key=f"{key}-ppl")
    data_table(
        [
            {
                "variant": titles[r["variant"]],
                "ppl": r["ppl"],
                "ppl_full": r["ppl_full"],
                "agreement": r["agreement"],
                "max_logit_diff": r["max_logit_diff"],
                "continuation": r["continuation"],
            }
            for r in ran
        ]
    )


def draw_lesson(shown: dict, key: str) -> None:
    """A lesson step's chat view (``state.chat.lesson``): the section's main figures."""
    if "missing" in shown:
        st.info(t("chat.missing", path=shown["missing"]))
        return
    trace, chat, section = shown["trace"], shown["chat"], shown["section"]
    st.markdown(t("chat.output", text=inert(trace.outputs["generated"])))
    if section == "timeline":
        draw_step(trace, chat, shown["step"], shown["layer"], key)
    elif section == "sinks":
        draw_sinks(
            shown["profile"],
            shown["measure"],
            shown["control"],
            chat.n_layers,
            chat.n_kv_heads,
            key,
        )
    elif section == "cache":
        draw_cut(trace, shown["cut"], shown["same"], key)
        draw_sweep(shown["sweep"], "ppl", shown["n"], f"{key}-sweep")
    elif section == "heads":
        draw_head_scores(shown["heads"], shown["kind"], chat.n_kv_heads, key)
