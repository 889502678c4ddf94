"""Variants lab: every efficient attention variant on the same input, side by side."""

from __future__ import annotations

import io
import json

import pandas as pd
import streamlit as st
from kit import friendly_errors
from state import variants as state
from views import variants as figs

st.title("⚡ Variants lab")
st.caption(
    "Efficient attention variants on one input: their maps, how far each is from full "
    "attention, what each can see, and what each costs — all measured here."
)

SYNTHETIC, TEXT = "Synthetic Q/K/V", "Text through a seeded random layer"
TRAINED = "A date through the trained Transformer"
DEFAULT_PICK = ["linformer", "performer", "longformer", "reformer", "bigbird", "mamba"]


def table_exports(rows: list[dict], stem: str) -> None:
    """CSV and JSON downloads of one table."""
    df = pd.DataFrame(rows)
    buf = io.StringIO()
    df.to_csv(buf, index=False)
    c1, c2 = st.columns(2)
    c1.download_button(
        "Download CSV", buf.getvalue(), f"{stem}.csv", mime="text/csv", key=f"csv-{stem}"
    )
    c2.download_button(
        "Download JSON",
        json.dumps(rows, default=str, indent=1),
        f"{stem}.json",
        mime="application/json",
        key=f"json-{stem}",
    )


def param_widgets(variant, n: int, source: str) -> dict:
    """One widget per hyper-parameter, its limits in the label."""
    values = {}
    for p in variant.params:
        key = f"hp-{source}-{variant.name}-{p.name}"  # per input: defaults fit its length
        label = f"{variant.title}: {p.label} ({p.limits})"
        if p.choices:
            values[p.name] = st.selectbox(label, p.choices, key=key, help=p.help or None)
        else:
            default = min(p.default, max(int(p.low), n))  # short inputs: defaults that fit
            values[p.name] = st.number_input(
                label, value=default, step=1, key=key, help=p.help or None
            )
    return values


def compare_tab() -> None:
    from engine.text import tokenize
    from engine.variants import REGISTRY, compare, inputs

    sources = [SYNTHETIC, TEXT] + ([TRAINED] if state.trained_available() else [])
    source = st.radio("Input", sources, horizontal=True)
    causal = st.checkbox("causal", help="Performer and Linformer are bidirectional here")
    synthetic, text, heads, d = (0, "clustered", 1.0, 0), "", 2, 32
    if source == TRAINED:
        limit = state.trained_max_length()
        text = st.text_input(
            f"A date, as you would write it (at most {limit} characters)", "12 March 2021"
        )
        st.caption(
            "Q, K, V are the first encoder layer's of the trained dates Transformer "
            f"({state.TRAINED_CHECKPOINT}). Each variant also replaces the self-attention of "
            "every encoder layer; the table shows the translation it then produces."
        )
        n_for_defaults = max(1, len(text))
    elif source == TEXT:
        c1, c2 = st.columns(2)
        heads = c1.number_input("heads (1 … 8)", 1, 8, 2)
        d = c2.number_input("head size d (8 … 128)", 8, 128, 32)
        text = st.text_area(
            f"Text (at most {inputs.TEXT_TOKEN_LIMIT} tokens)",
            "The quick brown fox jumps over the lazy dog because the dog "
            "was too lazy to chase the quick brown fox .",
        )
        st.caption(
            f"Q, K and V come from a {inputs.TEXT_LABEL}: word vectors seeded by the "
            "word, plus sinusoidal positions, through seeded W_Q, W_K, W_V."
        )
        n_for_defaults = max(1, len(tokenize(text)))
    else:
        s1, s2, s3, s4, s5, s6 = st.columns(6)
        lo, hi = inputs.LENGTH_LIMITS
        n = s1.number_input(
            f"n ({lo} … {compare.MAX_COMPARE_N})", lo, compare.MAX_COMPARE_N, 128, step=16
        )
        structure = s2.selectbox("structure", inputs.STRUCTURES, index=2)
        sharpness = s3.slider("sharpness (0.1 … 8)", 0.1, 8.0, 1.0)
        seed = s4.number_input("seed (0 … 9999)", 0, 9999, 0)
        heads = s5.number_input("heads (1 … 8)", 1, 8, 2)
        d = s6.number_input("head size d (8 … 128)", 8, 128, 32)
        synthetic = (int(n), structure, float(sharpness), int(seed))
        n_for_defaults = int(n)
    picked = st.multiselect(
        "Variants", list(REGISTRY), DEFAULT_PICK, format_func=lambda v: REGISTRY[v].title
    )
    source_key = {TEXT: "text", TRAINED: "trained"}.get(source, "synthetic")
    params = {}
    with st.expander("Hyper-parameters"):
        for name in picked:
            if REGISTRY[name].params:
                params[name] = param_widgets(REGISTRY[name], n_for_defaults, source_key)
    with st.spinner("Running the variants…"):
        traces, rows = state.compare(
            source_key,
            text,
            synthetic,
            tuple(picked),
            json.dumps(params, sort_keys=True),
            bool(causal),
            int(heads),
            int(d),
        )
    st.subheader("Error against full attention")
    st.caption(
        "rel_error = ‖O − O_full‖/‖O_full‖; KL and JS (nats) compare the maps row by "
        "row (blank where the map is not a distribution); top5_overlap = share of the "
        "5 strongest keys both maps agree on; missed_mass = full-attention weight on "
        "keys the pattern cannot see. Mamba is a different model, not an approximation."
    )
    st.dataframe(pd.DataFrame(rows), hide_index=True)
    table_exports(rows, "variants-errors")

    ref = traces["full (reference)"]
    n_heads = ref.maps["attention"].shape[1]
    head = st.number_input(f"head to show (0 … {n_heads - 1})", 0, n_heads - 1, 0)
    view = st.radio("Show", ["maps", "difference vs full", "pattern overlay"], horizontal=True)
    shown = ["full (reference)", *picked] if view == "maps" else picked
    cols = st.columns(2)
    for i, name in enumerate(shown):
        tr = traces[name]
        title = name if name in REGISTRY else "full (reference)"  # short: the flags follow
        with cols[i % 2]:
            if view == "maps":
                st.plotly_chart(
                    figs.map_figure(tr.maps["attention"], head, title=title), key=f"map-{name}"
                )
            elif view == "difference vs full":
                diff = compare.difference(tr, traces["full (reference)"])[0, head]
                st.plotly_chart(
                    figs.map_figure(
                        tr.maps["attention"],
                        head,
                        z=diff,
                        title=f"{title} − full",
                        diverging=True,
                        value_name="Δα",
                    ),
                    key=f"diff-{name}",
                )
            elif "pattern" in tr.maps:
                st.plotly_chart(
                    figs.overlay_figure(
                        ref.maps["attention"],
                        tr.maps["pattern"],
                        head,
                        title=f"full map; grey: {title} cannot see",
                    ),
                    key=f"overlay-{name}",
                )
            else:
                st.info(
                    f"{REGISTRY[name].title} has no fixed pattern: every key is reachable, "
                    "through an implied map."
                )
            st.caption(tr.maps["attention"].note)


def profile_tab() -> None:
    from engine import profile
    from engine.variants import REGISTRY

    st.markdown(
        "Median of 3 timed runs after one warm-up, one torch thread. Peak memory: "
        "the most tensor storage live at once during the warm-up, counted op by op "
        "(engine/profile.py says how); dashed lines are the memory models. The first "
        "sweep in a server process also loads torch's dispatch machinery (≈ 4 s once, "
        "outside the time budget)."
    )
    picked = st.multiselect(
        "Variants to profile", list(REGISTRY), list(REGISTRY), key="profile-variants"
    )
    options = [64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768]
    lengths = st.multiselect(
        f"Lengths n ({profile.LENGTH_LIMITS[0]} … {profile.LENGTH_LIMITS[1]})",
        options,
        list(profile.DEFAULT_LENGTHS),
    )
    c1, c2, c3 = st.columns(3)
    d = c1.selectbox("head size d", [32, 64, 128], index=1)
    time_budget = c2.slider("time budget, s (5 … 120)", 5, 120, int(profile.TIME_BUDGET_S))
    mem_gib = c3.slider("memory budget per run, GiB (0.25 … 4)", 0.25, 4.0, 2.0, step=0.25)
    budget = mem_gib * 2**30
    predictions = [
        {
            "variant": v,
            "n": n,
            "predicted_memory": profile.human_bytes(profile.predict_bytes(v, n, d, 1)),
            "predicted_gflop": profile.flops(v, n, d, 1) / 1e9,
            "over_budget": profile.predict_bytes(v, n, d, 1) > budget,
        }
        for n in sorted(lengths)
        for v in picked
    ]
    with st.expander("Prediction before running (memory model vs budget)"):
        st.dataframe(pd.DataFrame(predictions), hide_index=True)
        table_exports(predictions, "variants-predictions")
    sweep_state = st.session_state.setdefault("variants-sweep", {"items": [], "status": "idle"})
    b1, b2 = st.columns(2)
    run = b1.button("Run sweep", type="primary")
    b2.button("Stop sweep", help="Stops once the point being measured is done.")
    if sweep_state["status"] == "running" and not run:  # interrupted: Stop, or any widget
        sweep_state["status"] = "stopped"
    if run:
        sweep_state.update(items=[], status="running")
        total = max(1, len(picked) * len(set(lengths)))
        bar = st.progress(0.0, "starting…")
        for i, item in enumerate(
            profile.sweep(picked, lengths, d=d, time_budget_s=time_budget, memory_budget=budget)
        ):
            sweep_state["items"].append(item)
            bar.progress((i + 1) / total, f"{item.variant} at n = {item.n} ({i + 1} of {total})")
        sweep_state["status"] = "done"
    items = sweep_state["items"]
    points = [p for p in items if isinstance(p, profile.Point)]
    skips = [s for s in items if isinstance(s, profile.Skip)]
    if sweep_state["status"] == "stopped":
        st.warning(f"Sweep stopped after {len(items)} points; showing what was measured.")
    if not items:
        st.info("Run a sweep to measure time and memory.")
        return
    rows = [
        {**r, "peak_mib": r["peak_bytes"] / 2**20, "predicted_mib": r["predicted_bytes"] / 2**20}
        for r in profile.as_rows(points)
    ]
    if rows:
        st.plotly_chart(
            figs.loglog_figure(rows, "median_s", title="Median time vs n", y_title="seconds"),
            key="chart-time",
        )
        st.plotly_chart(
            figs.loglog_figure(
                rows,
                "peak_mib",
                predicted="predicted_mib",
                title="Peak memory vs n (measured; dashed: model)",
                y_title="MiB",
            ),
            key="chart-mem",
        )
        summary = profile.as_rows(profile.summarize(points))
        st.markdown(
            f"**Fitted log-log exponents** (tolerance ±{profile.EXPONENT_TOLERANCE}"
            " of the FLOP model's slope)"
        )
        st.dataframe(pd.DataFrame(summary), hide_index=True)
        table_exports(summary, "variants-exponents")
        st.markdown("**Measurements**")
        table = [{k: v for k, v in r.items() if k != "times_s"} for r in rows]
        st.dataframe(pd.DataFrame(table), hide_index=True)
        table_exports(table, "variants-profile")
    if skips:
        st.markdown("**Not run** (trimmed to stay within the budgets)")
        skipped = profile.as_rows(skips)
        st.dataframe(pd.DataFrame(skipped), hide_index=True)
        table_exports(skipped, "variants-skipped")


def long_tab() -> None:
    from engine.trace import AttentionMap
    from engine.variants.inputs import LONG_LENGTH_LIMITS

    lo, hi = LONG_LENGTH_LIMITS
    st.markdown(
        "Full attention of a long sequence, pooled block by block without ever "
        "holding the n × n matrix."
    )
    c1, c2, c3 = st.columns(3)
    n = c1.select_slider(
        f"n ({lo} … {hi}; 32k takes ≈ 20 s here)",
        [256, 1024, 2048, 4096, 8192, 16384, 32768],
        16384,
        key="long-n",
    )
    structure = c2.selectbox("Q/K structure", ["local", "random"])
    reduce = c3.selectbox("pool by", ["mean", "max"])
    with st.spinner("Pooling…"):
        pooled, block, seconds, peak, path = state.pooled_map(int(n), structure, reduce)
    full_bytes = n * n * 4
    st.markdown(
        f"Kernel path: **{path}** · block {block} → pooled ×{block} · "
        f"{seconds:.2f} s · measured peak {peak / 2**20:.1f} MiB = "
        f"{100 * peak / full_bytes:.1f}% of the {full_bytes / 2**20:.0f} MiB full map"
    )
    labels = [f"{i * block}" for i in range(pooled.shape[-1])]
    amap = AttentionMap(
        weights=pooled,
        query_labels=labels,
        key_labels=labels,
        kind="self",
        pooling=block,
        normalized=False,
        note=f"{reduce} of p_ij over {block}×{block} blocks",
    )
    st.plotly_chart(
        figs.map_figure(amap, 0, title=f"Full attention, n = {n}", value_name=f"{reduce} p"),
        key="pooled",
    )


def kv_tab() -> None:
    from engine.variants.kv_cache import LENGTH_LIMIT

    st.markdown(
        "One seeded attention layer (d_model 256, 4 heads) decodes n tokens: without "
        "a cache it re-projects the whole prefix at every step; with one it projects "
        "only the new token and attends against the stored keys and values."
    )
    n = st.slider(f"tokens to generate (16 … {LENGTH_LIMIT})", 16, LENGTH_LIMIT, 256)
    with st.spinner("Decoding both ways…"):
        res = state.kv_compare(int(n))
    c1, c2, c3 = st.columns(3)
    c1.metric("speedup (total time)", f"{res['speedup']:.1f}×")
    c2.metric("with cache", f"{res['total_cache_s']:.3f} s")
    c3.metric("without cache", f"{res['total_no_cache_s']:.3f} s")
    st.caption(
        f"Largest difference from full causal attention: cache "
        f"{res['max_abs_diff_cache_vs_full']:.1e}, no cache "
        f"{res['max_abs_diff_no_cache_vs_full']:.1e}."
    )
    st.plotly_chart(figs.per_token_figure(res), key="kv-chart")
    rows = [
        {"t": t + 1, "ms_cache": 1000 * a, "ms_no_cache": 1000 * b}
        for t, (a, b) in enumerate(
            zip(res["step_seconds_cache"], res["step_seconds_no_cache"], strict=True)
        )
    ]
    table_exports(rows, "variants-kv-cache")


def int8_tab() -> None:
    st.markdown(
        "SageAttention-style INT8: K smoothed (its mean over tokens removed — softmax "
        "does not change), Q and K quantised per block of tokens; against the naive "
        "one-scale-per-tensor INT8. A K channel bias is what breaks the naive scheme."
    )
    c1, c2, c3, c4 = st.columns(4)
    n = c1.number_input("n (16 … 1024)", 16, 1024, 256, step=16)
    d = c2.selectbox("head size d", [32, 64, 128], index=1, key="int8-d")
    outlier = c3.slider("K channel bias up to (0 … 50)", 0.0, 50.0, 20.0)
    block = c4.number_input("block (1 … 1024 tokens)", 1, 1024, 64)
    rows = state.int8_rows(int(n), int(d), float(outlier), int(block), 0)
    st.dataframe(pd.DataFrame(rows), hide_index=True)
    table_exports(rows, "variants-int8")


from engine import kernels  # noqa: E402 - light import; the rest loads inside each section

SECTIONS = {
    "Compare": (compare_tab, "the comparison"),
    "Cost profile": (profile_tab, "the cost profile"),
    "Long sequences": (long_tab, "the long-sequence map"),
    "KV cache": (kv_tab, "the KV-cache run"),
    "INT8": (int8_tab, "the INT8 comparison"),
}
st.caption(
    f"Kernel path on this machine: **{kernels.active_path('cpu')}** "
    "(Triton runs only on a CUDA GPU)."
)
# One section at a time, so a page load computes only what is on screen.
section = (
    st.segmented_control("Section", list(SECTIONS), default="Compare", key="variants-section")
    or "Compare"
)
body, what = SECTIONS[section]
with friendly_errors(what):
    body()
