"""The seed's claims, checked: every number the seed states, measured here.

The seed's numbers (quoted in issue 22; the seed text itself is not in the repository):

- FlashAttention "2–4× faster, 5–20× less memory": the fused exact kernel
  (engine.kernels.attention: torch's fused FlashAttention-2-style CPU kernel here, our
  Triton kernel on a GPU) against the textbook path that materialises
  softmax(QKᵀ/√d) and multiplies it by V; time (best of interleaved runs, one thread)
  and peak memory against n.
- INT8 attention "+30 % speed, < 1 % accuracy loss": the lab's SageAttention variant
  (engine.variants.int8, INT8 emulated in float32), the same scheme with a real INT8
  GEMM for QKᵀ (torch._int_mm), relative output error, and task accuracy when INT8 is
  swapped into the trained full-attention cells of the variant-quality grid.
- "8K + full attention → OOM": the variants' memory model against a measured peak at
  feasible n, fitted and extrapolated to 8,192, beside the machine's memory
  (/proc/meminfo); nothing is run at a size that could exhaust it.
- "no KV cache → long-text inference collapses": the chat model (SmolLM2-135M-Instruct,
  engine.models.chat.Decoder) writing the token after L tokens, with its KV cache (one
  step) and without (the whole prefix re-run), tokens per second against L.
- "sin/cos positional encoding is enough for most cases": the shipped PE ablation of the
  en-fr Transformer (read from its evaluation JSON, not retrained).

Times on a CPU are CPU seconds of this process (one torch thread), the best of several
runs taken in turn: the machine is shared, and wall time would also count the moments
another process held the core. Peak memory on a CPU is the growth of the resident set
(VmHWM after a reset, in a fresh process per point): it sees every allocation, the
scratch space inside torch's fused kernel too. Beside it, the tracker of engine.profile
(torch's tensor allocations only, blind to a kernel's internal scratch) and the
variants' memory models (memory() of ``full`` and ``flash``). On a GPU peak memory is
torch.cuda.max_memory_allocated, which sees everything, and times are wall clock.

The machine is shared: the load average is recorded before and after, and every ratio
is taken within one run. bench/gpu_attention.py calls :func:`gpu_update` on a CUDA
machine to fill the GPU column; until then the column says "no GPU lent".

Run: nice -n 5 python bench/claims.py [--quick] [--no-save]
     python bench/claims.py --markdown   (the saved table, as in bench/RESULTS.md)
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._save import save  # noqa: E402 - the root is added above
from engine import checkpoints, kernels, profile  # noqa: E402 - the root is added above
from engine.data import long_range  # noqa: E402
from engine.models import chat as chat_model  # noqa: E402
from engine.models import (
    registry,
    variant_lm,  # noqa: E402
)
from engine.training import variants as grid  # noqa: E402
from engine.variants.int8 import int8_attention, output_agreement, quantize  # noqa: E402
from engine.variants.registry import attend_fn  # noqa: E402

RESULT = checkpoints.result_name("claims")
NO_GPU = "no GPU lent"
# The grid tasks with a trained full-attention cell for each seed (assets/checkpoints/variants).
GRID_TASKS = ("control-128", "copy-128", "mqar-256", "mqar-512")
D, HEADS = 64, 4
TEXT = Path(__file__).resolve().parents[1] / "assets" / "text" / "pride-and-prejudice.txt"
# The seed's numbers, each as the range it claims (lo, hi); None = open side.
CLAIMED = {
    "flash.speedup": (2.0, 4.0),
    "flash.memory_ratio": (5.0, 20.0),
    "int8.speedup": (1.3, None),
    "int8.output_error_pct": (None, 1.0),
    "int8.task_accuracy_loss_pct": (None, 1.0),
    "kv_cache.speedup": (None, None),
    "oom.predicted_gib": (None, None),
}
WORDING = {
    "flash": "FlashAttention: 2–4× faster, 5–20× less memory",
    "int8": "INT8 attention: +30 % speed, < 1 % accuracy loss",
    "oom": "8K + full attention → OOM",
    "kv_cache": "no KV cache → long-text inference collapses",
    "pe": "sin/cos positional encoding is enough for most cases",
}


# ---------------------------------------------------------------- shared helpers
def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def meminfo() -> dict[str, int]:
    """MemTotal and MemAvailable in bytes (Linux /proc/meminfo)."""
    found = {}
    with open("/proc/meminfo") as f:
        for line in f:
            key, value = line.split(":")
            if key in ("MemTotal", "MemAvailable"):
                found[key] = int(value.split()[0]) * 1024
    return found


def sync(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


def best_times(fns: dict, device: str, rounds: int) -> dict[str, float]:
    """Best time of each function, run in turn within each round (contention on a shared
    machine only adds time, so the minimum is the least disturbed run).

    On a CPU the time is this process's CPU time (one torch thread, so one core's
    seconds): with other work on the machine, wall time also counts the moments the
    process was not running at all. On a GPU it is wall time between synchronisations.
    """
    clock = time.perf_counter if device == "cuda" else time.process_time
    best = dict.fromkeys(fns, math.inf)
    for fn in fns.values():  # warm-up: first calls allocate and load kernels
        fn()
    for _ in range(rounds):
        for name, fn in fns.items():
            sync(device)
            t0 = clock()
            fn()
            sync(device)
            best[name] = min(best[name], clock() - t0)
    return best


def peak_bytes(fn, device: str) -> int:
    """Peak bytes the call holds above what was live before it (see the module notes)."""
    if device == "cuda":
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
        fn()
        torch.cuda.synchronize()
        return int(torch.cuda.max_memory_allocated() - base)
    return profile.peak_memory_bytes(fn)


def naive_attention(q, k, v):
    """The textbook path: the n × n scores and weights materialised, then weights @ V."""
    s = (q @ k.transpose(-2, -1)) * q.shape[-1] ** -0.5
    return torch.softmax(s.float(), dim=-1).to(v.dtype) @ v


def row(rid: str, value, unit: str, **conditions) -> dict:
    """One measured number with its conditions; ``rid`` = topic.quantity[.nN]."""
    topic, quantity = rid.split(".")[:2]
    lo, hi = CLAIMED.get(f"{topic}.{quantity}", (None, None))
    value = None if value is None else float(f"{value:.4g}")
    return {
        "id": rid,
        "topic": topic,
        "quantity": quantity,
        "value": value,
        "unit": unit,
        "claimed": [lo, hi],
        **conditions,
    }


def qkv(n: int, device: str, dtype, heads: int = HEADS, seed: int = 0):
    g = torch.Generator(device=device).manual_seed(seed)
    return torch.randn(3, 1, heads, n, D, generator=g, device=device).to(dtype).unbind(0)


# ---------------------------------------------------------------- FlashAttention
def flash(ns, device: str, dtype, rounds: int) -> tuple[list[dict], list[dict]]:
    """Fused vs naive: time and peak memory at each n (the variants' models beside)."""
    rows, detail = [], []
    where = {"device": device_name(device), "d": D, "heads": HEADS, "dtype": str(dtype)[6:]}
    for n in ns:
        q, k, v = qkv(n, device, dtype)
        fns = {
            "fused": lambda q=q, k=k, v=v: kernels.attention(q, k, v),
            "naive": lambda q=q, k=k, v=v: naive_attention(q, k, v),
        }
        t = best_times(fns, device, rounds)
        peak = {name: peak_bytes(fn, device) for name, fn in fns.items()}
        rss = {name: rss_probe(name, n) for name in fns} if device == "cpu" else None
        model = {
            "fused": profile.predict_bytes("flash", n, D, HEADS),
            "naive": profile.predict_bytes("full", n, D, HEADS),
        }
        item = {
            "n": n,
            "best_s": t,
            "peak_bytes": peak,
            "rss_growth_bytes": rss,
            "model_bytes": model,
            "path": kernels.active_path(q.device),
        }
        detail.append(item)
        ms = {name: round(x * 1e3, 3) for name, x in t.items()}
        rows.append(row(f"flash.speedup.n{n}", t["naive"] / t["fused"], "×", n=n, ms=ms, **where))
        # The ratio of what the process really held (RSS, every allocation) where it was
        # measured; the tracker's (torch's allocations only) beside it.
        seen = rss or peak
        rows.append(
            row(
                f"flash.memory_ratio.n{n}",
                seen["naive"] / max(seen["fused"], 1),
                "×",
                n=n,
                method="rss" if rss else "cuda_allocator",  # how the peaks were measured
                mib={name: round(b / 2**20, 2) for name, b in seen.items()},
                tracker_ratio=round(peak["naive"] / max(peak["fused"], 1), 2),
                model_ratio=round(model["naive"] / model["fused"], 2),
                **where,
            )
        )
        print(
            f"flash n={n:>5}: fused {t['fused'] * 1e3:8.2f} ms, naive {t['naive'] * 1e3:8.2f}"
            f" ms | peak fused {seen['fused'] / 2**20:7.2f} MiB, naive "
            f"{seen['naive'] / 2**20:7.2f} MiB",
            flush=True,
        )
    return rows, detail


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def vm_hwm() -> int:
    """Peak resident set size since the last reset (/proc/self/status, bytes)."""
    with open("/proc/self/status") as f:
        line = next(x for x in f if x.startswith("VmHWM:"))
    return int(line.split()[1]) * 1024


def probe(kind: str, n: int) -> None:
    """(Subprocess) peak RSS growth of one fused or naive call above the resting RSS.

    A fresh process per point, so no allocator cache from an earlier call hides memory;
    the inputs exist and a short warm-up has run (BLAS and thread buffers) before the
    resting RSS is read, so the growth is what the call itself held (an upper bound)."""
    torch.set_num_threads(1)
    q, k, v = qkv(n, "cpu", torch.float32)
    fn = kernels.attention if kind == "fused" else naive_attention
    fn(q[:, :, :64], k[:, :, :64], v[:, :, :64])
    # Reset the peak (VmHWM) to the current RSS: importing torch peaks higher than where
    # the process then rests, and that peak would hide the call's own.
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    before = rss_bytes()
    fn(q, k, v)
    print(json.dumps({"kind": kind, "n": n, "growth": max(0, vm_hwm() - before)}))


def rss_probe(kind: str, n: int) -> int:
    run = [sys.executable, __file__, "--probe", kind, str(n)]
    done = subprocess.run(run, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])["growth"]


def device_name(device: str) -> str:
    if device == "cuda":
        return torch.cuda.get_device_name(0)
    return f"CPU {platform.processor() or platform.machine()}, {torch.get_num_threads()} thread"


# ---------------------------------------------------------------- INT8
def int8_real(q, k, v, block: int = 64):
    """SageAttention's scheme with a real INT8 GEMM for QKᵀ: K smoothed, Q and K
    quantised per block, torch._int_mm (int8 × int8 → int32), dequantised, softmax in
    float32, P V in float32. _int_mm is 2-D, so one head at a time."""
    k = k - k.mean(dim=-2, keepdim=True)
    qh, dq = quantize(q.float(), block)
    kh, dk = quantize(k.float(), block)
    qi, ki = qh.to(torch.int8), kh.to(torch.int8)
    scale = q.shape[-1] ** -0.5
    out = torch.empty_like(q)
    for h in range(q.shape[1]):
        s = torch._int_mm(qi[0, h], ki[0, h].T.contiguous()).float()
        s = s * (dq[0, h] * scale) * dk[0, h].T
        out[0, h] = (torch.softmax(s, dim=-1) @ v[0, h].float()).to(q.dtype)
    return out


def int8_speed(n: int, device: str, rounds: int) -> tuple[list[dict], dict]:
    dtype = torch.float32 if device == "cpu" else torch.bfloat16
    q, k, v = qkv(n, device, dtype)
    fns = {
        "fused": lambda: kernels.attention(q, k, v),
        "naive": lambda: naive_attention(q, k, v),
        "int8_emulated": lambda: int8_attention(q.float(), k.float(), v.float(), scheme="sage"),
        "int8_real_gemm": lambda: int8_real(q, k, v),
    }
    t = best_times(fns, device, rounds)
    ms = {name: round(x * 1e3, 3) for name, x in t.items()}
    where = {"n": n, "d": D, "heads": HEADS, "device": device_name(device), "ms": ms}
    rows = [
        row(
            "int8.speedup.fused",
            t["fused"] / t["int8_real_gemm"],
            "×",
            dtype=f"int8 / {str(dtype)[6:]}",
            **where,
        ),
        row(
            "int8.speedup.naive",
            t["naive"] / t["int8_real_gemm"],
            "×",
            dtype=f"int8 / {str(dtype)[6:]}",
            **where,
        ),
        row(
            "int8.speedup.emulated",
            t["naive"] / t["int8_emulated"],
            "×",
            dtype="int8 (float32 arithmetic) / float32",
            **where,
        ),
    ]
    print(f"int8 n={n}: " + ", ".join(f"{k} {s * 1e3:.2f} ms" for k, s in t.items()), flush=True)
    return rows, {"n": n, "best_s": t}


def int8_error(n: int, device: str) -> tuple[list[dict], dict]:
    """Relative L1 error of the output against float32 attention, SageAttention and naive
    per-tensor INT8, on plain Gaussian Q, K, V and with a K channel bias (the outlier)."""
    rows, detail = [], {}
    for case, bias in (("gaussian", 0.0), ("k_bias", 30.0)):
        q, k, v = qkv(n, device, torch.float32)
        k = k + torch.linspace(0, bias, D, device=device)
        ref = naive_attention(q, k, v)
        for scheme in ("sage", "naive"):
            agree = output_agreement(int8_attention(q, k, v, scheme=scheme)[0], ref)
            detail[f"{case}.{scheme}"] = agree
            if scheme == "sage" or case == "k_bias":
                rows.append(
                    row(
                        f"int8.output_error_pct.{case}_{scheme}",
                        100 * agree["rel_l1"],
                        "%",
                        n=n,
                        d=D,
                        heads=HEADS,
                        dtype="int8 QKᵀ, float32 PV",
                        device=device_name(device),
                    )
                )
    return rows, detail


def int8_tasks(tasks, seeds) -> tuple[list[dict], list[dict]]:
    """Accuracy of each trained full-attention cell, exact and with INT8 swapped in."""
    detail = []
    for task_name in tasks:
        task = long_range.get(task_name)
        for seed in seeds:
            model, meta = variant_lm.load(variant_lm.checkpoint_name(task_name, "full", seed))
            size = meta["test"]["size"]
            exact = grid.score(model, attend_fn("full"), task, size)
            int8 = grid.score(model, attend_fn("int8", {"scheme": "sage"}), task, size)
            detail.append(
                {
                    "task": task_name,
                    "seed": seed,
                    "n": task.n,
                    "test": size,
                    "full": round(exact, 6),
                    "int8": round(int8, 6),
                }
            )
            print(f"int8 swap {task_name} s{seed}: full {exact:.4f}, int8 {int8:.4f}", flush=True)
    exact = statistics.mean(c["full"] for c in detail)
    int8 = statistics.mean(c["int8"] for c in detail)
    loss = 100 * (exact - int8) / exact
    rows = [
        row(
            "int8.task_accuracy_loss_pct.grid",
            loss,
            "%",
            n="128–512",
            d=32,
            heads=2,
            layers=2,
            dtype="int8 QKᵀ, float32 PV",
            device=device_name("cpu"),
            tasks=list(tasks),
            seeds=list(seeds),
            accuracy_full=round(exact, 4),
            accuracy_int8=round(int8, 4),
        )
    ]
    return rows, detail


# ---------------------------------------------------------------- 8K → OOM
def oom(ns, chat_ns, chat) -> tuple[list[dict], dict]:
    """The memory model at 8K against measured peaks at feasible n, fitted as a·n^b."""
    mem = meminfo()
    where = {
        "device": device_name("cpu"),
        "machine_total_gib": round(mem["MemTotal"] / 2**30, 2),
        "machine_available_gib": round(mem["MemAvailable"] / 2**30, 2),
    }
    # One head of the lab's full attention holding its map (the cost profile's point).
    peaks = [profile.measure("full", n, d=D, heads=1, repeats=1).peak_bytes for n in ns]
    c, a = fit_quadratic(ns, peaks)
    extrapolated = c + a * 8192**2
    predicted = profile.predict_bytes("full", 8192, D, 1)
    rows = [
        row(
            "oom.predicted_gib.lab_head",
            predicted / 2**30,
            "GiB",
            n=8192,
            d=D,
            heads=1,
            dtype="float32",
            measured_extrapolated_gib=round(extrapolated / 2**30, 3),
            bytes_per_pair=round(a, 2),
            measured_at=list(ns),
            **where,
        ),
    ]
    detail = {
        "lab_head": {
            "n": list(ns),
            "peak_bytes": peaks,
            "fit": [c, a],
            "extrapolated_8192": extrapolated,
            "predicted_8192": predicted,
        }
    }
    if chat is not None:
        rows_chat, detail["chat"] = oom_chat(chat, chat_ns, where)
        rows += rows_chat
    return rows, detail


def fit_quadratic(ns, peaks) -> tuple[float, float]:
    """Least-squares ``peak ≈ c + a·n²``: a fixed part (weights, buffers) and the maps;
    ``a`` is the measured bytes per query–key pair, the model's slope to compare."""
    x = np.stack([np.ones(len(ns)), np.asarray(ns, float) ** 2], 1)
    (c, a), *_ = np.linalg.lstsq(x, np.asarray(peaks, float), rcond=None)
    return float(c), float(a)


def chat_map_bytes(chat, n: int) -> int:
    """Every layer's and head's n × n float32 map, as a prefill that keeps them holds."""
    return chat.n_layers * chat.n_heads * n * n * 4


def oom_chat(chat, ns, where) -> tuple[list[dict], dict]:
    ids = chat_ids(chat, max(ns))
    peaks = []
    for n in ns:
        decoder = chat_model.Decoder(chat)
        peaks.append(profile.peak_memory_bytes(lambda d=decoder, n=n: d.prefill(ids[:n])))
    c, a = fit_quadratic(ns, peaks)
    extrapolated = c + a * 8192**2
    predicted = chat_map_bytes(chat, 8192)
    available = where["machine_available_gib"] * 2**30
    fits = int(math.sqrt(available / chat_map_bytes(chat, 1)))  # by the model
    fits_measured = int(math.sqrt(max(available - c, 0) / a))  # by the fitted peak
    rows = [
        row(
            "oom.predicted_gib.chat_maps",
            predicted / 2**30,
            "GiB",
            n=8192,
            d=chat.head_dim,
            heads=chat.n_heads,
            layers=chat.n_layers,
            dtype="float32 maps",
            measured_extrapolated_gib=round(extrapolated / 2**30, 2),
            bytes_per_pair_per_map=round(a / (chat.n_layers * chat.n_heads), 2),
            measured_at=list(ns),
            longest_n_that_fits=fits,
            longest_n_that_fits_measured=fits_measured,
            **where,
        )
    ]
    print(
        f"oom chat: measured {[round(p / 2**20, 1) for p in peaks]} MiB at {ns}; "
        f"8K predicted {predicted / 2**30:.1f} GiB, extrapolated {extrapolated / 2**30:.1f}"
    )
    return rows, {
        "n": list(ns),
        "peak_bytes": peaks,
        "fit": [c, a],
        "extrapolated_8192": extrapolated,
        "predicted_8192": predicted,
    }


# ---------------------------------------------------------------- KV cache
def chat_ids(chat, n: int) -> list[int]:
    text = TEXT.read_text(encoding="utf-8")[: 20 * n]
    ids = chat.tokenizer(text)["input_ids"]
    if len(ids) < n + 1:
        raise RuntimeError(f"the shipped text gives {len(ids)} tokens, fewer than {n + 1}")
    return ids[: n + 1]


def kv_cache(chat, lengths, repeats: int) -> tuple[list[dict], list[dict]]:
    """Seconds to write the token after L tokens: one cached step, or the prefix re-run."""
    ids = chat_ids(chat, max(lengths))
    rows, detail = [], []
    for n in lengths:
        cached, uncached = [], []
        for _ in range(repeats):
            decoder = chat_model.Decoder(chat)
            decoder.prefill(ids[:n])
            t0 = time.process_time()  # CPU seconds, one thread: see best_times
            decoder.step(ids[n])
            cached.append(time.process_time() - t0)
            t0 = time.process_time()
            chat_model.Decoder(chat).prefill(ids[: n + 1])  # what a loop without a cache runs
            uncached.append(time.process_time() - t0)
        with_s, without_s = min(cached), min(uncached)
        detail.append({"L": n, "with_cache_s": with_s, "without_cache_s": without_s})
        rows.append(
            row(
                f"kv_cache.speedup.L{n}",
                without_s / with_s,
                "×",
                n=n,
                d=chat.head_dim,
                heads=chat.n_heads,
                layers=chat.n_layers,
                kv_heads=chat.n_kv_heads,
                dtype="float16 weights, float32 attention",
                device=device_name("cpu"),
                tokens_per_s_with=round(1 / with_s, 2),
                tokens_per_s_without=round(1 / without_s, 2),
            )
        )
        print(
            f"kv L={n:>4}: with cache {1 / with_s:7.2f} tok/s, without {1 / without_s:7.2f} tok/s",
            flush=True,
        )
    return rows, detail


# ---------------------------------------------------------------- positional encoding
def pe() -> tuple[list[dict], dict | None]:
    found = checkpoints.load_result(checkpoints.result_name("transformer", "en-fr"))
    if not found or "pe_ablation" not in found:
        return [], None
    # The conditions are the shipped models' own (the three differ only in their PE).
    config = checkpoints.load_meta("transformer-enfr-sinusoidal")["config"]
    conditions = dict(
        n=found["n_test"],
        d=config["d_model"],
        heads=config["n_heads"],
        layers=config["n_layers"],
        dtype="float32",
        device="CPU (shipped evaluation)",
        source=found["command"],
    )
    rows = [
        row(
            f"pe.bleu.{name}",
            scores["bleu"],
            "BLEU",
            exact_match=scores["exact_match"],
            **conditions,
        )
        for name, scores in found["pe_ablation"].items()
    ]
    bleu = {name: scores["bleu"] for name, scores in found["pe_ablation"].items()}
    if {"sinusoidal", "learned", "none"} <= set(bleu):
        # How much of what positions add (none → learned) the fixed sinusoids recover.
        share = (bleu["sinusoidal"] - bleu["none"]) / (bleu["learned"] - bleu["none"])
        rows.append(row("pe.gain_share.sinusoidal", 100 * share, "%", **conditions))
    return rows, found["pe_ablation"]


# ---------------------------------------------------------------- the runs
def cpu_run(quick: bool) -> dict:
    torch.set_num_threads(1)
    torch.manual_seed(0)
    before = load_average()
    t_start = time.perf_counter()
    ns = (256, 512, 1024) if quick else (512, 1024, 2048, 4096)
    rounds = 3 if quick else 5
    rows, detail = [], {}
    r, detail["flash"] = flash(ns, "cpu", torch.float32, rounds)
    rows += r
    r, detail["int8_speed"] = int8_speed(1024 if quick else 2048, "cpu", rounds)
    rows += r
    r, detail["int8_error"] = int8_error(1024, "cpu")
    rows += r
    tasks = ("copy-128", "mqar-256") if quick else GRID_TASKS
    r, detail["int8_tasks"] = int8_tasks(tasks, (0,) if quick else (0, 1))
    rows += r
    chat = registry.chat().load() if chat_model.available() else None
    r, detail["oom"] = oom(ns, (64, 128) if quick else (64, 128, 256), chat)
    rows += r
    if chat is not None:
        lengths = (32, 64) if quick else (32, 64, 128, 256)
        r, detail["kv_cache"] = kv_cache(chat, lengths, 2 if quick else 3)
        rows += r
    r, detail["pe"] = pe()
    rows += r
    return {
        "rows": rows,
        "detail": detail,
        "wording": WORDING,
        "wording_source": "issue 22, quoting the seed (the seed text is not in the repository)",
        "conditions": {
            "device": device_name("cpu"),
            "torch": torch.__version__,
            "threads": 1,
            "quick": quick,
            "meminfo": meminfo(),
        },
        "load_average": {"before": before, "after": load_average()},
        "seconds": round(time.perf_counter() - t_start, 1),
        "command": "nice -n 5 python bench/claims.py" + (" --quick" if quick else ""),
    }


def gpu_run(quick: bool) -> dict:
    """The device-dependent rows on CUDA (bf16), for the GPU column."""
    ns = (1024, 2048, 4096) if quick else (512, 1024, 2048, 4096, 8192, 16384)
    rows, detail = [], {}
    r, detail["flash"] = flash(ns, "cuda", torch.bfloat16, 10)
    rows += r
    r, detail["int8_speed"] = int8_speed(4096, "cuda", 10)
    rows += r
    r, detail["int8_error"] = int8_error(1024, "cuda")
    rows += r
    rows.append(oom_gpu())
    return {
        "status": device_name("cuda"),
        "rows": rows,
        "detail": detail,
        "command": "python bench/gpu_attention.py" + (" --quick" if quick else ""),
    }


def oom_gpu(n: int = 8192) -> dict:
    """One head of naive attention at 8K, run on the GPU: its measured peak, not a fit."""
    q, k, v = qkv(n, "cuda", torch.float32, heads=1)
    peak = peak_bytes(lambda: naive_attention(q, k, v), "cuda")
    total = torch.cuda.get_device_properties(0).total_memory
    return row(
        "oom.predicted_gib.lab_head",
        peak / 2**30,
        "GiB",
        n=n,
        d=D,
        heads=1,
        dtype="float32",
        device=f"{device_name('cuda')}, {total / 2**30:.0f} GiB",
        predicted_gib=round(profile.predict_bytes("full", n, D, 1) / 2**30, 4),
    )


def gpu_update(quick: bool = False) -> dict:
    """Measure the GPU rows and write them into the saved claims (the CPU rows kept)."""
    result = checkpoints.load_result(RESULT) or {"rows": []}
    result["gpu"] = gpu_run(quick)
    checkpoints.save_result(RESULT, result)
    return result["gpu"]


def _cell(r: dict | None) -> str:
    if r is None:
        return "—"
    value = "—" if r["value"] is None else f"{r['value']:.3g} {r['unit']}"
    where = ", ".join(f"{k} = {r[k]}" for k in ("n", "d", "layers", "heads", "dtype") if k in r)
    return f"{value} ({where}; {r['device']})"


def _claimed(r: dict) -> str:
    lo, hi = r["claimed"]
    if lo is not None and hi is not None:
        return f"{lo:g}–{hi:g} {r['unit']}"
    return (
        f"≥ {lo:g} {r['unit']}"
        if lo is not None
        else (f"< {hi:g} {r['unit']}" if hi is not None else "—")
    )


def markdown(result: dict) -> str:
    """The saved rows as the table of bench/RESULTS.md (CPU and GPU columns)."""
    gpu = result.get("gpu") or {"status": NO_GPU, "rows": []}
    on_gpu = {r["id"]: r for r in gpu.get("rows", [])}
    lines = [
        "| claim | row | the seed says | measured here (CPU) | GPU |",
        "|---|---|---|---|---|",
    ]
    for r in result["rows"]:
        g = (
            _cell(on_gpu[r["id"]])
            if r["id"] in on_gpu
            else (NO_GPU if gpu.get("status") == NO_GPU else "not measured on the GPU")
        )
        lines.append(f"| {r['topic']} | `{r['id']}` | {_claimed(r)} | {_cell(r)} | {g} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="shorter lengths, fewer tasks")
    ap.add_argument("--no-save", action="store_true", help=f"do not write {RESULT}.json")
    ap.add_argument("--probe", nargs=2, help=argparse.SUPPRESS)
    ap.add_argument(
        "--markdown", action="store_true", help="print the saved table, measure nothing"
    )
    args = ap.parse_args(argv)
    if args.markdown:
        print(markdown(checkpoints.load_result(RESULT) or {"rows": []}))
        return 0
    if args.probe:
        probe(args.probe[0], int(args.probe[1]))
        return 0
    result = cpu_run(args.quick)
    saved = checkpoints.load_result(RESULT) or {}
    result["gpu"] = saved.get("gpu") or {"status": NO_GPU, "rows": []}
    if not args.no_save:
        print(f"saved {checkpoints.save_result(RESULT, result)}")
    print(json.dumps(save(result)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
