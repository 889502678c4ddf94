"""Benchmark of the chat model (SmolLM2-135M-Instruct); the last stdout line is one JSON object.

1. Speed (one torch thread): the model loaded warm; 30 generated tokens with every step's
   attention row captured (target ≤ 2.0 s); one forward pass with attentions; one cache
   policy's perplexity on 2k tokens of the shipped text beside the full cache (≤ 20 s).
2. The StreamingLLM table (Xiao et al. 2023, arXiv 2309.17453, Table 1 / Figure 3 in
   spirit): perplexity, next-token agreement and KL(full ‖ policy) on the first 2k tokens
   of Pride and Prejudice (assets/text) for the full cache, window only, 4 sinks + window
   and H2O at several cache sizes, from one run of engine.analysis.cache_eval.
3. Attention to the first token by layer (the StreamingLLM figure) on the text's first
   512 tokens, with the first-token control, and the strongest heads of each type.
4. ``press``: one cache-policy example asked live as the Chat page asks it (≤ 5 s).

The machine is shared: the load average is recorded beside every time.

Run: python bench/chat.py [--tokens 2048] [--budgets 64 128 256 512] [--h2o-interval 16]
     [--parts speed sinks table h2o press]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

import numpy as np
import torch
from _save import save

from engine.analysis import cache_eval, heads, press_eval, sinks
from engine.analysis.forward import self_attention
from engine.data import ruler
from engine.models import chat as chat_model
from engine.models import precision, registry
from engine.models.cache_policy import CachePolicy

ROOT = Path(__file__).resolve().parents[1]
TEXT = ROOT / "assets" / "text" / "pride-and-prejudice.txt"
PROMPT = "Write a short story about a lighthouse keeper who finds a message in a bottle."
CONTROL_PROMPT = "The quick brown fox jumps over the lazy dog. It was a sunny day in the park."


def load_average() -> float:
    return round(os.getloadavg()[0], 2)


def timed(fn, repeats: int = 3) -> tuple[float, float, object]:
    """Median wall and CPU seconds over ``repeats`` calls, and the last result. On a
    shared machine the CPU time (this process's time on a core) is the fair figure."""
    wall, cpu, out = [], [], None
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return statistics.median(wall), statistics.median(cpu), out


def speed(chat, ids: list[int]) -> dict:
    load_s, load_cpu, _ = timed(registry.chat().load, repeats=2)
    gen_s, gen_cpu, trace = timed(
        lambda: chat_model.generate(chat, PROMPT, max_new_tokens=30, temperature=0.0)
    )
    prompt_ids = chat_model.encode(chat, PROMPT)
    fwd_s, fwd_cpu, _ = timed(lambda: self_attention(chat, prompt_ids))
    policy = CachePolicy("sinks", window=252, sinks=4)
    policy_s, policy_cpu, one = timed(
        lambda: cache_eval.evaluate_policy(chat, ids, policy), repeats=1
    )
    # The same work with float32 products (engine.models.precision): the ratio, one run.
    with precision.only(torch.float32):
        gen32_s, _, trace32 = timed(
            lambda: chat_model.generate(chat, PROMPT, max_new_tokens=30, temperature=0.0)
        )
        policy32_s, _, one32 = timed(
            lambda: cache_eval.evaluate_policy(chat, ids, policy), repeats=1
        )
    same = trace32.outputs["token_ids"] == trace.outputs["token_ids"]
    return {
        "load_warm_s": round(load_s, 3),
        "load_warm_cpu_s": round(load_cpu, 3),
        "generate_30_s": round(gen_s, 3),
        "generate_30_cpu_s": round(gen_cpu, 3),
        "generate_steps": len(trace.outputs["kept"]),
        "forward_with_attentions_s": round(fwd_s, 3),
        "forward_with_attentions_cpu_s": round(fwd_cpu, 3),
        "forward_tokens": len(prompt_ids),
        "ppl_one_policy_s": round(policy_s, 2),
        "ppl_one_policy_cpu_s": round(policy_cpu, 2),
        "ppl_one_policy_tokens": one["n_predicted"],
        "ppl_one_policy": round(one["ppl"], 3),
        "ppl_full": round(one["ppl_full"], 3),
        "float32_products": {
            "generate_30_s": round(gen32_s, 3),
            "generate_speedup": round(gen32_s / gen_s, 2),
            "same_tokens": same,
            "ppl_one_policy_s": round(policy32_s, 2),
            "ppl_speedup": round(policy32_s / policy_s, 2),
            "ppl_one_policy": round(one32["ppl"], 3),
            "ppl_full": round(one32["ppl_full"], 3),
        },
        "load_average": load_average(),
    }


def table(chat, ids: list[int], budgets: list[int], h2o_interval: int) -> dict:
    t0, c0 = time.perf_counter(), time.process_time()

    def report(done, total):
        print(f"  sweep {done}/{total} tokens, {time.perf_counter() - t0:.0f} s", flush=True)

    rows = cache_eval.budget_sweep(
        chat, ids, budgets, h2o_interval=h2o_interval, chunk=128, progress=report
    )
    keys = ("agreement", "kl", "ppl", "agreement_evicted", "kl_evicted", "ppl_evicted")
    out = [
        {
            "budget": r["budget"],
            "policy": r["policy"],
            "evicted_from": r["evicted_from"],
            "ppl_full_evicted": round(r["ppl_full_evicted"], 3),
            **{k: round(r[k], 4) for k in keys},
        }
        for r in rows
    ]
    return {
        "tokens": len(ids),
        "predicted": rows[0]["n_predicted"],
        "ppl_full": round(rows[0]["ppl_full"], 3),
        "h2o_interval": h2o_interval,
        "rows": out,
        "seconds": round(time.perf_counter() - t0, 1),
        "cpu_seconds": round(time.process_time() - c0, 1),
        "load_average": load_average(),
    }


def h2o_exactness(chat, ids: list[int], budget: int, interval: int) -> dict:
    """H2O re-chosen at every position (the Decoder's step) against every ``interval``."""
    policy = cache_eval.sweep_policies(budget)[2]
    exact, blocky = (
        cache_eval.evaluate_policy(chat, ids, policy, h2o_interval=i) for i in (1, interval)
    )
    return {
        "tokens": len(ids),
        "budget": budget,
        "interval": interval,
        "ppl_exact": round(exact["ppl"], 3),
        "ppl_interval": round(blocky["ppl"], 3),
        "agreement_exact": round(exact["agreement"], 4),
        "agreement_interval": round(blocky["agreement"], 4),
        "seconds_exact": round(exact["seconds"], 1),
        "seconds_interval": round(blocky["seconds"], 1),
    }


def sink_figure(chat, ids: list[int]) -> dict:
    w = self_attention(chat, ids)
    profile = sinks.sink_profile(w, first=4)
    control = sinks.first_token_control(chat, CONTROL_PROMPT, "\n", template=False)
    found = heads.detect_heads(chat, seed=0, n=50, sequences=4)
    top = {}
    for name in heads.HEAD_TYPES:
        s = found[name]
        order = np.argsort(s, axis=None)[::-1][:3]
        top[name] = [
            {
                "layer": int(i // s.shape[1]),
                "head": int(i % s.shape[1]),
                "score": round(float(s.flat[i]), 3),
            }
            for i in order
        ]
    r2 = lambda a: [round(float(x), 3) for x in a]  # noqa: E731
    return {
        "tokens": len(ids),
        "first_token_by_layer": r2(sinks.first_token_by_layer(w)),
        "mass_first4_by_layer": r2(profile["mass_first"].mean(1)),
        "local_width_by_layer": r2(profile["local_width"].mean(1)),
        "entropy_by_layer": r2(profile["entropy"].mean(1)),
        "control": {
            "tokens": control["tokens"],
            "original": r2(control["original"]),
            "replaced": r2(control["replaced"]),
            "layers_sink_moved": [int(i) for i in np.nonzero(control["moved"])[0]],
        },
        "top_heads": top,
    }


def live_press(chat, seeds=(100, 101, 102), press="snapkv_question", ratio=0.5) -> dict:
    """Chat › What eviction loses, one example asked live (issue 32: ≤ 5 s), the engine
    calls the page's job makes (``app/state/presses.py``): a new example generated and
    prefilled, then the full cache and one press answering in one batch. At one torch
    thread, and at every core (the job takes them while nothing else runs)."""
    out = {"task": "niah_number", "length": 1024, "press": press, "ratio": ratio}
    for threads in sorted({1, os.cpu_count() or 1}):
        torch.set_num_threads(threads)
        prefill, answers = [], []
        for seed in seeds:
            ex = ruler.generate(chat.tokenizer, "niah_number", 1024, seed)
            t0 = time.perf_counter()
            pre = press_eval.prefill(chat, ex.context_ids, ex.question_ids, None)
            t1 = time.perf_counter()
            runs = [("full", 0.0), (press, ratio)]
            press_eval.run_example(chat, ex, runs, None, masks=True, pre=pre, perplexity=False)
            prefill.append(t1 - t0)
            answers.append(time.perf_counter() - t1)
        total = [p + a for p, a in zip(prefill, answers, strict=True)]
        out[f"threads_{threads}"] = {
            "prefill_s": round(statistics.median(prefill), 2),
            "answers_s": round(statistics.median(answers), 2),
            "total_s": round(statistics.median(total), 2),
            "load_average": load_average(),
        }
    torch.set_num_threads(1)
    return out


def main() -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tokens", type=int, default=2048, help="text tokens read (predictions + 1)")
    ap.add_argument("--budgets", type=int, nargs="+", default=[64, 128, 256, 512])
    ap.add_argument("--h2o-interval", type=int, default=16)
    parts = ("speed", "sinks", "table", "h2o", "press")
    ap.add_argument("--parts", nargs="+", choices=parts, default=list(parts))
    args = ap.parse_args()
    torch.set_num_threads(1)

    chat = registry.chat().load()
    text_ids = chat.tokenizer.encode(TEXT.read_text(encoding="utf-8"))
    ids = text_ids[: args.tokens + 1]
    result = {"model": chat.name, "threads": torch.get_num_threads(), "text_tokens": len(text_ids)}

    if "speed" in args.parts:
        print("speed …", flush=True)
        result["speed"] = speed(chat, ids)
        print(json.dumps(result["speed"]), flush=True)

    if "sinks" in args.parts:
        print("sinks and heads …", flush=True)
        result["sinks"] = sink_figure(chat, text_ids[:512])
        print("first token by layer:", result["sinks"]["first_token_by_layer"], flush=True)

    if "table" in args.parts:
        print("StreamingLLM table …", flush=True)
        result["table"] = t = table(chat, ids, args.budgets, args.h2o_interval)
        print(f"full cache: ppl {t['ppl_full']} over {t['predicted']} predicted tokens")
        print("budget  policy   ppl      ppl(evicted)  agreement  KL")
        for r in t["rows"]:
            print(
                f"{r['budget']:6d}  {r['policy']['name']:7s}  {r['ppl']:8.2f}"
                f" {r['ppl_evicted']:10.2f}  {r['agreement']:9.3f}  {r['kl']:.3f}"
            )

    if "h2o" in args.parts:
        print("H2O exact vs interval …", flush=True)
        result["h2o_exactness"] = h2o_exactness(chat, ids[:385], 64, args.h2o_interval)
        print(json.dumps(result["h2o_exactness"]), flush=True)
    if "press" in args.parts:
        print("one press example, live …", flush=True)
        result["live_press"] = live_press(chat)
        print(json.dumps(result["live_press"]), flush=True)
    return save(result, "-".join(["chat", *args.parts]) if len(args.parts) < len(parts) else "chat")


if __name__ == "__main__":
    print(json.dumps(main()))
