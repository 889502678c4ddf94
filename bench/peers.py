"""Our variants against the public implementations of the same methods, side by side.

    bash scripts/setup.sh --bench          # the peers (requirements-bench.txt), once
    python bench/peers.py                  # B=1 H=4 d=64, n = 1k…8k, 1 thread, 3 repeats
    python bench/peers.py --n 1024,2048 --repeats 5 --only reformer,full

Every pair runs on the same shapes in one process; per length, the repeats take ours and
the peer in turn (so a burst of load from other jobs hits both alike) and the ratio is
median(ours) ÷ median(peer): below 1.0 ours is faster. Times are this process's CPU time
by default (``--clock cpu``; one torch thread, so it is the work done, and waiting for a
core on a shared machine does not count); ``--clock wall`` for wall-clock time.
Where a peer's module includes its own projections (reformer-pytorch, linformer), it runs
with them, as published: the ratio then flatters the peer slightly less.

Two checks on the noise come with every run: ``paired_ratio``, the median over repeats
of ours ÷ the peer timed right after it (each pair sees the same load), and a control
row, ``noise``, that times torch's SDPA against itself the same way: its distance from
1.0 is what "equal" looks like on this machine during this run. The load average is
printed before and after.

The exponent of each of our time curves (least squares of log t on log n) is checked
against the slope of that variant's own FLOP model over the same lengths (±0.2). With
CUDA, ours (Triton) also meets FlexAttention and SDPA's flash backend in bf16.

The peers are benchmark-only dependencies, imported here and nowhere in app/ or engine/.
The last stdout line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F
from _save import save

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine import kernels, profile  # noqa: E402 - the repository root is added just above
from engine.variants import based, deltanet, get, gla, gqa, retnet  # noqa: E402
from engine.variants.mamba import selection_weights, selective_parameters  # noqa: E402

TOLERANCE = profile.EXPONENT_TOLERANCE


@dataclass
class Pair:
    """One of our variants and its public peer, built for one length ``n``."""

    name: str  # our registry name
    label: str  # what is compared, for the table
    peer: str
    expected: Callable[[list[int]], float]  # slope of our FLOP model over the lengths
    build: Callable[[int], tuple[Callable[[], object], Callable[[], object]]]


def inputs(B: int, H: int, n: int, d: int, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(3, B, H, n, d, generator=g).unbind(0)


def ours(name: str, q, k, v, hp: dict | None = None, causal: bool = False):
    variant = get(name)
    hp = variant.resolve(hp, q.shape[-2])
    return lambda: variant.run(q, k, v, causal=causal, want_map=False, hp=hp)


def model_slope(name: str, d: int, hp_for: Callable[[int], dict] = lambda n: {}):
    def slope(ns):
        hps = [get(name).resolve(hp_for(n), n) for n in ns]
        flops = [get(name).flops(n, d, hp) for n, hp in zip(ns, hps, strict=True)]
        return profile.fit_exponent(ns, flops)

    return slope


# reformer-pytorch takes n / bucket_size buckets (128 at n = 8,192); ours keeps that count at
# every n, so that the fitted exponent measures the attention, not a growing hash.
REFORMER_BUCKETS = 128


def cpu_pairs(B: int, H: int, d: int) -> list[Pair]:
    """The CPU comparisons: the peers' published modules at our shapes."""
    from linformer import LinformerSelfAttention
    from local_attention import LocalAttention
    from mambapy.mamba import MambaBlock
    from performer_pytorch import FastAttention
    from reformer_pytorch import LSHSelfAttention

    def sdpa(name):
        def build(n):
            q, k, v = inputs(B, H, n, d)
            return ours(name, q, k, v), lambda: F.scaled_dot_product_attention(q, k, v)

        return build

    def reformer(n):
        q, k, v = inputs(B, H, n, d)
        hp = {"rounds": 4, "chunk": 64, "buckets": REFORMER_BUCKETS}
        peer = LSHSelfAttention(dim=H * d, heads=H, bucket_size=64, n_hashes=4).eval()
        x = torch.randn(B, n, H * d)
        return ours("reformer", q, k, v, hp), lambda: peer(x)

    def longformer(n):
        q, k, v = inputs(B, H, n, d)
        peer = LocalAttention(
            window_size=256,
            look_backward=1,
            look_forward=1,
            dim=d,
            autopad=True,
            use_rotary_pos_emb=False,
        ).eval()
        return ours("longformer", q, k, v, {"window": 256, "globals": 0}), lambda: peer(q, k, v)

    def performer(n):
        q, k, v = inputs(B, H, n, d)
        peer = FastAttention(dim_heads=d, nb_features=256).eval()
        return ours("performer", q, k, v, {"features": 256}), lambda: peer(q, k, v)

    def linformer(n):
        q, k, v = inputs(B, H, n, d)
        peer = LinformerSelfAttention(dim=H * d, seq_len=n, k=256, heads=H).eval()
        x = torch.randn(B, n, H * d)
        return ours("linformer", q, k, v, {"k": 256}), lambda: peer(x)

    def mamba(n):
        q, k, v = inputs(B, H, n, d)
        # mambapy's scan on the same selective parameters: B·H sequences of d channels.
        x, delta, Bm, Cm, A = selective_parameters(q, k, v, selection_weights(d, 16, 0))
        flat = [t.reshape(B * H, n, -1) for t in (x, delta, Bm, Cm)]
        skip = torch.zeros(d)  # our y = α x has no D·x term
        return ours(
            "mamba", q, k, v, {"d_state": 16}, causal=True
        ), lambda: MambaBlock.selective_scan(None, flat[0], flat[1], A, flat[2], flat[3], skip)

    def control(n):
        q, k, v = inputs(B, H, n, d)
        return (
            lambda: F.scaled_dot_product_attention(q, k, v),
            lambda: F.scaled_dot_product_attention(q, k, v),
        )

    return [
        Pair("noise", "control: SDPA against itself", "torch scaled_dot_product_attention",
             lambda ns: 2.0, control),
        Pair("full", "full (exact, no map)", "torch scaled_dot_product_attention",
             lambda ns: 2.0, sdpa("full")),
        Pair("flash", "FlashAttention (CPU path)", "torch scaled_dot_product_attention",
             lambda ns: 2.0, sdpa("flash")),
        Pair("reformer", "Reformer (4 rounds, chunk 64, 128 buckets)",
             "reformer-pytorch LSHSelfAttention (4 hashes, bucket 64, with projections)",
             model_slope("reformer", d, lambda n: {"rounds": 4, "chunk": 64,
                                                   "buckets": REFORMER_BUCKETS}),
             reformer),
        Pair("longformer", "Longformer (window 256 = |i−j| ≤ 256, no globals)",
             "local-attention LocalAttention (window 256, look back/forward 1)",
             model_slope("longformer", d, lambda n: {"window": 256, "globals": 0}), longformer),
        Pair("performer", "Performer (256 features)", "performer-pytorch FastAttention (256)",
             model_slope("performer", d, lambda n: {"features": 256}), performer),
        Pair("linformer", "Linformer (k = 256)",
             "linformer LinformerSelfAttention (k = 256, with projections)",
             model_slope("linformer", d, lambda n: {"k": 256}), linformer),
        Pair("mamba", "Mamba (N = 16, with its Δ, B, C projections)",
             "mambapy selective_scan (pscan) on the same Δ, B, C",
             model_slope("mamba", d, lambda n: {"d_state": 16}), mamba),
    ]  # fmt: skip


# Today's variants (issue 20) with a public CPU implementation of the same computation:
# torch's SDPA (GQA), transformers' gpt-oss eager path (learned sink logit + window) and
# the pure-PyTorch references of flash-linear-attention (``fla-core``, with ``einops``).
TODAY = ("gqa", "sinks", "retnet", "gla", "deltanet", "gated_deltanet", "based")
SINK_WINDOW = 128
# The rest, and why no peer is timed (the table prints these).
NO_PEER = {
    "mla": "no CPU reference on PyPI: DeepSeek's model.py (absorbed form) is not packaged",
    "differential": "the PyPI differential-transformer (0.0.3) is a whole module with its "
    "projections and GroupNorm; not set up against our Q/K/V split",
    "moba": "MoonshotAI's MoBA is not on PyPI and needs flash-attn (CUDA); fla's "
    "parallel_moba is a Triton kernel",
    "nsa": "fla's naive_nsa requires ≥ 16 query heads per KV head (a Triton tile size kept "
    "in its reference); ours scores blocks per head",
}


def today_pairs(B: int, H: int, d: int) -> list[Pair]:
    """Today's variants against public implementations, on the quantities ours derives
    from q, k, v (its gates, β, feature projections), as the Mamba pair does."""
    from types import SimpleNamespace

    from fla.ops.based.naive import naive_chunk_based
    from fla.ops.delta_rule.naive import delta_rule_chunkwise
    from fla.ops.gated_delta_rule.naive import naive_chunk_gated_delta_rule
    from fla.ops.gla.naive import naive_recurrent_gla
    from fla.ops.retention.naive import naive_retention
    from transformers.models.gpt_oss.modeling_gpt_oss import eager_attention_forward

    def gqa_pair(n):
        q, k, v = inputs(B, H, n, d)
        kg, vg = (gqa.pool_groups(t, 1) for t in (k, v))
        sdpa = lambda: F.scaled_dot_product_attention(q, kg, vg, enable_gqa=True)  # noqa: E731
        return ours("gqa", q, k, v, {"groups": 1}), sdpa

    def sinks_pair(n):
        q, k, v = inputs(B, H, n, d)
        hp = {"window": SINK_WINDOW, "sinks": 0, "logit": "on", "sink_logit": 0.0}
        i = torch.arange(n)
        band = (i[:, None] >= i) & (i[:, None] - i < SINK_WINDOW)
        mask = torch.zeros(n, n).masked_fill(~band, float("-inf"))
        module = SimpleNamespace(num_key_value_groups=1, sinks=torch.zeros(H), training=False)
        scale = d**-0.5
        peer = lambda: eager_attention_forward(module, q, k, v, mask, scale)  # noqa: E731
        return ours("sinks", q, k, v, hp, causal=True), peer

    def retnet_pair(n):
        q, k, v = inputs(B, H, n, d)
        qr, kr = retnet.rotate(q, k, 1.0)  # the rotation ours applies; fla's scales by d^-½
        return ours("retnet", q, k, v, causal=True), lambda: naive_retention(qr, kr, v)

    def gla_pair(n):
        q, k, v = inputs(B, H, n, d)
        g = gla.gate_log_alpha(k, 0)
        qt, kt, vt, gt = (t.transpose(1, 2) for t in (q, k, v, g))  # fla: [B, T, H, D]
        return ours("gla", q, k, v, causal=True), lambda: naive_recurrent_gla(qt, kt, vt, gt)

    def delta_pair(name, gated):
        def build(n):
            q, k, v = inputs(B, H, n, d)
            beta, log_alpha = deltanet.write_strength(k, 0, gated)
            qn, kn = deltanet.normalize(q), deltanet.normalize(k)
            if gated:  # fla's chunk form takes [B, T, H, ·]
                qt, kt, vt = (t.transpose(1, 2) for t in (qn, kn, v))
                g_t, b_t = log_alpha.transpose(1, 2), beta.transpose(1, 2)
                peer = lambda: naive_chunk_gated_delta_rule(qt, kt, vt, g_t, b_t)  # noqa: E731
            else:
                peer = lambda: delta_rule_chunkwise(qn, kn, v, beta)  # noqa: E731
            return ours(name, q, k, v, causal=True), peer

        return build

    def based_pair(n):
        q, k, v = inputs(B, H, n, d)
        W_q, W_k = based.projections(d, 16, 0, q.dtype)
        qf, kf = q @ W_q, k @ W_k
        return ours("based", q, k, v, causal=True), lambda: naive_chunk_based(qf, kf, v)

    return [
        Pair("gqa", "GQA (G = 1: MQA), exact", "torch SDPA enable_gqa on the same pooled K/V",
             lambda ns: 2.0, gqa_pair),
        Pair("sinks", f"Window {SINK_WINDOW} + learned sink logit (causal)",
             "transformers gpt-oss eager_attention_forward (sinks, window mask)",
             model_slope("sinks", d, lambda n: {"window": SINK_WINDOW, "sinks": 0,
                                                "logit": "on"}), sinks_pair),
        Pair("retnet", "RetNet retention (chunkwise)", "fla naive_retention (parallel form)",
             model_slope("retnet", d), retnet_pair),
        Pair("gla", "GLA (chunkwise)", "fla naive_recurrent_gla on the same gates",
             model_slope("gla", d), gla_pair),
        Pair("deltanet", "DeltaNet (recurrent)", "fla delta_rule_chunkwise on the same β",
             model_slope("deltanet", d), delta_pair("deltanet", False)),
        Pair("gated_deltanet", "Gated DeltaNet (recurrent)",
             "fla naive_chunk_gated_delta_rule on the same α, β",
             model_slope("gated_deltanet", d), delta_pair("gated_deltanet", True)),
        Pair("based", "Based, d' = 16 (causal)", "fla naive_chunk_based on the same projections",
             model_slope("based", d), based_pair),
    ]  # fmt: skip


def clock(kind: str) -> Callable[[], float]:
    return time.process_time if kind == "cpu" else time.perf_counter


def time_pair(build, n: int, repeats: int, now) -> tuple[list[float], list[float]]:
    """Ours and the peer in turn, ``repeats`` times each, after one warm-up of each."""
    mine, theirs = build(n)
    with torch.inference_mode():
        mine(), theirs()
        t_ours, t_peer = [], []
        for _ in range(repeats):
            for fn, out in ((mine, t_ours), (theirs, t_peer)):
                t0 = now()
                fn()
                out.append(now() - t0)
    return t_ours, t_peer


def run_cpu(args) -> dict:
    wanted = set(args.only)
    pairs = []
    if not wanted or wanted - set(TODAY) - set(NO_PEER):  # the seed's peers, when asked
        pairs += cpu_pairs(args.B, args.H, args.d)
    if not wanted or wanted & set(TODAY):
        pairs += today_pairs(args.B, args.H, args.d)
    pairs = [p for p in pairs if not wanted or p.name in wanted]
    now = clock(args.clock)
    rows, summary = [], {}
    print(f"{'ours':<44} {'n':>6} {'ours ms':>10} {'peer ms':>10} {'ratio':>6}   peer")
    for pair in pairs:
        med_ours, med_peer = [], []
        for n in args.n:
            t_ours, t_peer = time_pair(pair.build, n, args.repeats, now)
            mo, mp = statistics.median(t_ours), statistics.median(t_peer)
            med_ours.append(mo)
            med_peer.append(mp)
            rows.append(
                {
                    "variant": pair.name,
                    "n": n,
                    "ours_s": round(mo, 5),
                    "peer_s": round(mp, 5),
                    "ratio": round(mo / mp, 3),
                }
            )
            print(
                f"{pair.label:<44} {n:>6} {mo * 1e3:>10.1f} {mp * 1e3:>10.1f} "
                f"{mo / mp:>6.2f}   {pair.peer}",
                flush=True,
            )
        expected = pair.expected(args.n)
        measured = profile.fit_exponent(args.n, med_ours)
        peer_slope = profile.fit_exponent(args.n, med_peer)
        ratio = med_ours[-1] / med_peer[-1]
        paired = statistics.median(a / b for a, b in zip(t_ours, t_peer, strict=True))
        summary[pair.name] = {
            "label": pair.label,
            "peer": pair.peer,
            "ratio_at_max_n": round(ratio, 3),
            "paired_ratio_at_max_n": round(paired, 3),
            "exponent": None if measured is None else round(measured, 3),
            "expected_exponent": round(expected, 3),
            "peer_exponent": None if peer_slope is None else round(peer_slope, 3),
            "exponent_ok": None if measured is None else abs(measured - expected) <= TOLERANCE,
            "not_slower": ratio <= 1.0,
        }
    print(f"\nat n = {args.n[-1]}: ratio (ours ÷ peer; paired), fitted exponent (expected)")
    for name, s in summary.items():
        print(
            f"  {name:<11} {s['ratio_at_max_n']:>5.2f}× ({s['paired_ratio_at_max_n']:.2f})  "
            f"exponent {s['exponent']} ({s['expected_exponent']}; "
            f"peer {s['peer_exponent']})"
        )
    if not wanted or wanted & set(NO_PEER):
        print("\nno peer timed:")
        for name, why in NO_PEER.items():
            print(f"  {name:<11} {why}")
    return {"rows": rows, "summary": summary, "no_peer": NO_PEER}


# ---------------------------------------------------------------- GPU (CUDA only)
def run_gpu(ns, d: int = 128, heads: int = 16) -> list[dict]:
    """bf16 forward: ours (engine.kernels on CUDA = Triton) vs FlexAttention vs SDPA flash."""
    import triton.testing
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.nn.attention.flex_attention import flex_attention

    flex = torch.compile(flex_attention, dynamic=False)

    def ms(fn):
        return float(triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median"))

    def sdpa_flash(q, k, v):
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            return F.scaled_dot_product_attention(q, k, v)

    rows = []
    print(f"\nGPU bf16, d={d}: ms {'ours':>8} {'flex':>8} {'sdpa':>8} | ours÷flex ours÷sdpa")
    for n in ns:
        B = max(1, 16384 // n)
        q, k, v = (
            torch.randn(B, heads, n, d, device="cuda", dtype=torch.bfloat16) for _ in range(3)
        )
        t = {
            "ours": ms(lambda q=q, k=k, v=v: kernels.attention(q, k, v)),
            "flex": ms(lambda q=q, k=k, v=v: flex(q, k, v)),
            "sdpa_flash": ms(lambda q=q, k=k, v=v: sdpa_flash(q, k, v)),
        }
        row = {"n": n, "B": B, "H": heads, "d": d}
        row |= {f"{key}_ms": round(x, 4) for key, x in t.items()}
        row["ours_over_flex"] = round(t["ours"] / t["flex"], 3)
        row["ours_over_sdpa_flash"] = round(t["ours"] / t["sdpa_flash"], 3)
        rows.append(row)
        print(
            f"  n={n:>6}      {t['ours']:8.3f} {t['flex']:8.3f} {t['sdpa_flash']:8.3f} | "
            f"{row['ours_over_flex']:9.2f} {row['ours_over_sdpa_flash']:9.2f}"
        )
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--B", type=int, default=1)
    ap.add_argument("--H", type=int, default=4)
    ap.add_argument("--d", type=int, default=64)
    ap.add_argument("--n", default="1024,2048,4096,8192", help="comma-separated lengths")
    ap.add_argument("--threads", type=int, default=1, help="torch threads (1 on a shared box)")
    ap.add_argument("--repeats", type=int, default=5, help="timed runs per length (median)")
    ap.add_argument("--clock", choices=("cpu", "wall"), default="cpu")
    ap.add_argument("--only", default="", help="comma-separated variant names")
    ap.add_argument("--gpu-n", default="1024,4096,16384", help="lengths for the CUDA table")
    args = ap.parse_args(argv)
    args.n = sorted(int(x) for x in args.n.split(","))
    args.only = [x for x in args.only.split(",") if x]
    torch.set_num_threads(args.threads)
    config = {k: getattr(args, k) for k in ("B", "H", "d", "n", "threads", "repeats", "clock")}
    config["load_before"] = [round(x, 2) for x in os.getloadavg()]
    print(f"torch {torch.__version__}, {args.threads} thread(s), {json.dumps(config)}")
    result = {"config": config, "cpu": run_cpu(args), "cuda": torch.cuda.is_available()}
    config["load_after"] = [round(x, 2) for x in os.getloadavg()]
    print(
        f"load average (1, 5, 15 min): before {config['load_before']}, after {config['load_after']}"
    )
    if result["cuda"]:  # never touches CUDA on a CPU machine
        result["gpu"] = run_gpu([int(x) for x in args.gpu_n.split(",")])
    s = dict(result["cpu"]["summary"])
    control = s.pop("noise", None)  # the control is no variant of ours
    result["noise_ratio"] = None if control is None else control["ratio_at_max_n"]
    result["ratios"] = {name: row["ratio_at_max_n"] for name, row in s.items()}
    result["paired_ratios"] = {name: row["paired_ratio_at_max_n"] for name, row in s.items()}
    result["exponents"] = {
        name: {"ours": row["exponent"], "expected": row["expected_exponent"]}
        for name, row in s.items()
    }
    result["all_not_slower"] = all(row["not_slower"] for row in s.values())
    result["all_exponents_ok"] = all(row["exponent_ok"] is not False for row in s.values())
    print(json.dumps(save(result, "peers-only" if args.only else "peers")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
