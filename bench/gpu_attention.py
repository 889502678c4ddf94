"""Triton attention kernels: correctness first, then speed against torch and naive attention.

    python bench/gpu_attention.py            # on a CUDA machine: full run (a few minutes)
    python bench/gpu_attention.py --quick    # n ≤ 4k, fewer points (a smoke run)

On a GPU:
- forward: TFLOP/s (4·B·H·n²·d, halved for causal) of ours vs torch SDPA (flash backend)
  vs torch FlexAttention (compiled, causal as a block mask) vs naive softmax(QKᵀ)V,
  bf16, n = 1k…16k, d = 64 and 128, B·n = 16k tokens, H = 2048/d;
- block-sparse: time vs fraction of kept blocks (random block masks), against the same
  kernel with every block kept: the time should follow the fraction;
- pooled map: ours (O(n·d) memory) vs softmax(QKᵀ) materialised then pooled: time and
  peak memory;
- decode: one query against a cache, split-K vs SDPA.
Targets on an H200 (989 TFLOP/s dense bf16): forward ≥ 1.0× SDPA and ≥ 550 TFLOP/s at
n ≥ 8k, d = 128, non-causal.

Without CUDA it says so, runs the correctness checks on the CPU (the PyTorch path against
float64 attention, and the Triton kernels in the interpreter), times the CPU pooled map
and prints {"cuda": false, ...}. The last stdout line is always one JSON object.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import torch
from _save import save

if not torch.cuda.is_available():  # must precede the first triton import (lazy below)
    os.environ["TRITON_INTERPRET"] = "1"

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine import kernels as K  # noqa: E402 - the repository root is added just above


# ---------------------------------------------------------------- correctness checks
def naive(q, k, v, *, causal=False, allowed=None, scale=None):
    """Full attention in float64 (or float32 on big inputs): (out, lse, p)."""
    dt = torch.float64 if q.device.type == "cpu" else torch.float32
    q, k, v = q.to(dt), k.to(dt), v.to(dt)
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    s = q @ k.transpose(-2, -1) * scale
    n_q, n_k = s.shape[-2:]
    ok = torch.ones(n_q, n_k, dtype=torch.bool, device=q.device)
    if causal:
        ok = ok.tril(n_k - n_q)
    if allowed is not None:
        ok = ok & allowed
    s = s.masked_fill(~ok, -math.inf)
    lse = torch.logsumexp(s, -1)
    p = torch.exp(s - lse[..., None]).nan_to_num(0.0)
    return p @ v, lse, p


def pool(p, block, reduce):
    """Pooled map of the full probabilities; ceil_mode windows divide by their clipped size."""
    if reduce == "max":
        return torch.nn.functional.max_pool2d(p, block, ceil_mode=True)
    return torch.nn.functional.avg_pool2d(p, block, ceil_mode=True)


def max_err(a, b):
    a, b = a.double(), b.double()
    finite = torch.isfinite(b)
    if not torch.equal(finite, torch.isfinite(a)):
        return math.inf
    return float((a[finite] - b[finite]).abs().max()) if finite.any() else 0.0


def check_kernels(path: str, device: str, dtypes, n: int, d: int) -> dict:
    """Max abs error of every kernel on ``path`` against full attention, per dtype."""
    g = torch.Generator(device=device).manual_seed(0)
    errors = {}
    for dtype in dtypes:
        name = str(dtype).removeprefix("torch.")

        def rnd(*shape, dtype=dtype):
            return torch.randn(*shape, generator=g, device=device).to(dtype)

        q, k, v = (rnd(2, 2, n, d) for _ in range(3))
        worst = {"attention": 0.0, "block_sparse": 0.0, "pooled": 0.0, "decode": 0.0}
        for causal in (False, True):
            out, lse = K.attention(q, k, v, causal=causal, path=path)
            ref_out, ref_lse, p = naive(q, k, v, causal=causal)
            worst["attention"] = max(
                worst["attention"], max_err(out, ref_out), max_err(lse, ref_lse)
            )

            bs = 16 if path == "pytorch" or device == "cpu" else 64
            bm = K.bigbird_block_mask(n, block_size=bs, heads=2, random_blocks=1).to(device)
            allowed = bm.repeat_interleave(bs, 1).repeat_interleave(bs, 2)[:, :n, :n][None]
            out, lse = K.block_sparse_attention(
                q, k, v, bm, block_size=bs, causal=causal, path=path
            )
            ref_out, ref_lse, _ = naive(q, k, v, causal=causal, allowed=allowed)
            worst["block_sparse"] = max(
                worst["block_sparse"], max_err(out, ref_out), max_err(lse, ref_lse)
            )

            for reduce in ("mean", "max"):
                pooled = K.pooled_attention_map(
                    q, k, block=32, causal=causal, reduce=reduce, path=path
                )
                worst["pooled"] = max(worst["pooled"], max_err(pooled, pool(p, 32, reduce)))
        out, lse = K.decode_step(q[:, :, -1:], k, v, path=path)
        ref_out, ref_lse, _ = naive(q[:, :, -1:], k, v)
        worst["decode"] = max(max_err(out, ref_out), max_err(lse, ref_lse))
        errors[name] = {key: float(f"{val:.3g}") for key, val in worst.items()}
    return errors


# float64 inputs still return a float32 lse, hence 1e-6.
TOLERANCE = {"float64": 1e-6, "float32": 1e-4, "float16": 4e-3, "bfloat16": 3e-2}


def all_within(errors: dict) -> bool:
    return all(max(e.values()) <= TOLERANCE[dt] for dt, e in errors.items())


# ---------------------------------------------------------------- CPU measurements
def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def pooled_peak_probe(n: int) -> None:
    """(Subprocess) peak RSS above the resting RSS of one pooled map at n, d = 64, block n/128.

    ru_maxrss is the lifetime peak, so the growth is measured against the resting RSS just
    before the call: an upper bound on what the call itself held.
    """
    q, k = torch.randn(1, 1, n, 64), torch.randn(1, 1, n, 64)
    # Warm up on a slice: the first matmul allocates BLAS and thread-pool buffers once.
    K.pooled_attention_map(q[:, :, :512], k[:, :, :512], block=n // 128)
    before = rss_bytes()
    t = time.perf_counter()
    K.pooled_attention_map(q, k, block=n // 128)
    seconds = time.perf_counter() - t
    peak = max(0, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - before)
    print(json.dumps({"n": n, "seconds": round(seconds, 2), "peak_growth_bytes": peak}))


def cpu_pooled(ns) -> list[dict]:
    rows = []
    for n in ns:
        run = [sys.executable, __file__, "--probe-pooled", str(n)]
        probe = json.loads(subprocess.run(run, capture_output=True, text=True, check=True).stdout)
        full = n * n * 4
        rows.append(
            {**probe, "full_map_bytes": full, "peak_fraction": probe["peak_growth_bytes"] / full}
        )
        print(
            f"CPU pooled map n={n:>6} d=64 block={n // 128}: {probe['seconds']:6.2f} s, "
            f"peak growth {probe['peak_growth_bytes'] / 2**20:7.1f} MiB "
            f"= {rows[-1]['peak_fraction']:.1%} of the full n×n float32 map"
        )
    return rows


def hopper_compile_summary() -> dict:
    """Compile every kernel for sm_90 in a fresh, uninterpreted process (no GPU needed)."""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    script = Path(__file__).resolve().parents[1] / "scripts" / "triton_compile_check.py"
    run = [sys.executable, str(script), "--quick"]
    done = subprocess.run(run, env=env, capture_output=True, text=True, timeout=900)
    rows = json.loads(done.stdout.strip().splitlines()[-1])["kernels"]
    summary = {
        "kernels": len(rows),
        "max_registers": max(r["registers"] for r in rows),
        "spilling": [r["kernel"] for r in rows if r["stack_bytes"]],
        "wgmma": sorted({r["kernel"] for r in rows if r["wgmma"]}),
    }
    print(f"sm_90 compile (python scripts/triton_compile_check.py --quick): {json.dumps(summary)}")
    return summary


# ---------------------------------------------------------------- GPU measurements
def bench_ms(fn) -> float:
    import triton.testing

    return float(triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median"))


def sdpa_flash(q, k, v, causal):
    from torch.nn.attention import SDPBackend, sdpa_kernel

    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)


_FLEX = None


def flex(q, k, v, causal):
    """torch's FlexAttention (compiled once; the causal mask as a block mask, built once
    per shape and cached, as a user would)."""
    global _FLEX
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention

    if _FLEX is None:
        _FLEX = {"fn": torch.compile(flex_attention, dynamic=False), "masks": {}}
    mask = None
    if causal:
        key = (q.shape[-2], str(q.device))
        if key not in _FLEX["masks"]:
            _FLEX["masks"][key] = create_block_mask(
                lambda b, h, i, j: j <= i, None, None, q.shape[-2], q.shape[-2], device=q.device
            )
        mask = _FLEX["masks"][key]
    return _FLEX["fn"](q, k, v, block_mask=mask)


def naive_bf16(q, k, v, causal):
    s = (q @ k.transpose(-2, -1)) * (q.shape[-1] ** -0.5)
    if causal:
        n = s.shape[-1]
        s = s.masked_fill(~torch.ones(n, n, dtype=torch.bool, device=s.device).tril(), -math.inf)
    return torch.softmax(s.float(), dim=-1).to(q.dtype) @ v


def forward_row(d: int, n: int, causal: bool) -> dict:
    """TFLOP/s of ours, SDPA (flash) and naive at one shape; B·n = 16k tokens, H = 2048/d."""
    B, H = max(1, 16384 // n), 2048 // d
    q, k, v = (torch.randn(B, H, n, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    flops = 4 * B * H * n * n * d / (2 if causal else 1)
    row = {"d": d, "n": n, "causal": causal, "B": B, "H": H}
    row["ours"] = flops / bench_ms(lambda: K.attention(q, k, v, causal=causal)) / 1e9
    row["sdpa"] = flops / bench_ms(lambda: sdpa_flash(q, k, v, causal)) / 1e9
    row["flex"] = flops / bench_ms(lambda: flex(q, k, v, causal)) / 1e9
    # The naive path holds B·H·n² scores (bf16 and float32 copies).
    fits = B * H * n * n * 8 < 0.5 * torch.cuda.get_device_properties(0).total_memory
    row["naive"] = flops / bench_ms(lambda: naive_bf16(q, k, v, causal)) / 1e9 if fits else None
    row["ours_over_sdpa"] = row["ours"] / row["sdpa"]
    row["ours_over_flex"] = row["ours"] / row["flex"]
    return {key: round(x, 3) if isinstance(x, float) else x for key, x in row.items()}


def forward_table(ns, dims) -> list[dict]:
    rows = []
    print(
        f"\n{'d':>4} {'n':>6} {'causal':>6} | TFLOP/s {'ours':>7} {'sdpa':>7} {'flex':>7} "
        f"{'naive':>7} | ours÷sdpa ours÷flex"
    )
    for d in dims:
        for n in ns:
            for causal in (False, True):
                row = forward_row(d, n, causal)
                rows.append(row)
                torch.cuda.empty_cache()
                naive = f"{row['naive']:7.1f}" if row["naive"] else f"{'—':>7}"
                print(
                    f"{d:>4} {n:>6} {causal!s:>6} |         {row['ours']:7.1f} {row['sdpa']:7.1f} "
                    f"{row['flex']:7.1f} {naive} | {row['ours_over_sdpa']:.2f}×     "
                    f"{row['ours_over_flex']:.2f}×"
                )
    return rows


def block_sparse_table(n: int, d: int = 128, block: int = 128) -> list[dict]:
    B, H = 1, 16
    q, k, v = (torch.randn(B, H, n, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    nb = K.num_blocks(n, block)
    g = torch.Generator().manual_seed(0)
    # Masks live on the GPU, as a caller's would: no host copy inside the timed call.
    full = torch.ones(1, nb, nb, dtype=torch.bool, device="cuda")
    t_full = bench_ms(lambda: K.block_sparse_attention(q, k, v, full, block_size=block))
    rows = []
    print(f"\nblock-sparse n={n} d={d} block={block}: time vs kept fraction (dense = all blocks)")
    for frac in (0.02, 0.05, 0.1, 0.25, 0.5, 1.0):
        bm = torch.rand(H, nb, nb, generator=g) < frac
        bm |= torch.eye(nb, dtype=torch.bool)  # every query block keeps its own block
        kept = K.kept_fraction(bm)
        bm = bm.cuda()
        t = bench_ms(lambda bm=bm: K.block_sparse_attention(q, k, v, bm, block_size=block))
        row = {"target": frac, "kept": round(kept, 4), "ms": round(t, 3)}
        row["time_ratio"] = round(t / t_full, 4)
        row["ratio_over_kept"] = round(t / t_full / kept, 3)  # 1.0 = perfectly proportional
        rows.append(row)
        print(f"  kept {kept:6.3f}: {t:8.3f} ms  ({row['time_ratio']:.3f} of dense)")
    window = K.sliding_window_block_mask(n, window=512, block_size=block).cuda()
    t_win = bench_ms(lambda: K.block_sparse_attention(q, k, v, window, block_size=block))
    kept = K.kept_fraction(window)
    rows.append({"pattern": "sliding_window_512", "kept": round(kept, 4), "ms": round(t_win, 3)})
    print(f"  sliding window ±512 (kept {kept:.3f}): {t_win:8.3f} ms")
    return rows


def peak_and_time(fn) -> tuple[int, float]:
    """(peak bytes allocated above the current level, median ms) of a CUDA call."""
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    fn()
    torch.cuda.synchronize()
    return torch.cuda.max_memory_allocated() - base, round(bench_ms(fn), 3)


def pooled_row(n: int, d: int, heads: int) -> dict:
    q, k = (torch.randn(1, heads, n, d, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    block = n // 128

    def full_then_pool():
        p = torch.softmax((q @ k.transpose(-2, -1)).float() * d**-0.5, dim=-1)
        return torch.nn.functional.avg_pool2d(p, block)

    row = {"n": n, "block": block}
    row["ours_peak_bytes"], row["ours_ms"] = peak_and_time(
        lambda: K.pooled_attention_map(q, k, block=block)
    )
    # bf16 scores, their float32 copy and the float32 softmax: about 10 bytes per pair.
    if heads * n * n * 10 < 0.6 * torch.cuda.get_device_properties(0).total_memory:
        row["full_peak_bytes"], row["full_ms"] = peak_and_time(full_then_pool)
    else:
        row["full_peak_bytes"] = row["full_ms"] = None
    return row


def pooled_table(ns, d: int = 64, heads: int = 4) -> list[dict]:
    rows = []
    print(f"\npooled map d={d} H={heads} block=n/128: ours vs softmax(QKᵀ) materialised, pooled")
    for n in ns:
        row = pooled_row(n, d, heads)
        rows.append(row)
        torch.cuda.empty_cache()
        full = (
            f"{row['full_ms']:9.3f} ms, {row['full_peak_bytes'] / 2**20:9.1f} MiB"
            if row["full_ms"]
            else "skipped (would not fit)"
        )
        mib = row["ours_peak_bytes"] / 2**20
        print(f"  n={n:>6}: ours {row['ours_ms']:9.3f} ms, {mib:9.1f} MiB | full {full}")
    return rows


def decode_row(T: int, d: int, heads: int) -> dict:
    q = torch.randn(1, heads, 1, d, device="cuda", dtype=torch.bfloat16)
    kc, vc = (torch.randn(1, heads, T, d, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    moved = 2 * heads * T * d * 2  # bytes of K and V read
    ours = bench_ms(lambda: K.decode_step(q, kc, vc))
    sdpa = bench_ms(lambda: torch.nn.functional.scaled_dot_product_attention(q, kc, vc))
    return {
        "T": T,
        "ours_ms": round(ours, 4),
        "sdpa_ms": round(sdpa, 4),
        "ours_GBps": round(moved / ours / 1e6, 1),
    }


def decode_table(ts, d: int = 128, heads: int = 32) -> list[dict]:
    rows = []
    print(f"\ndecode step B=1 H={heads} d={d} bf16: split-K vs SDPA (cache read in GB/s)")
    for T in ts:
        row = decode_row(T, d, heads)
        rows.append(row)
        print(
            f"  T={T:>7}: ours {row['ours_ms']:.4f} ms ({row['ours_GBps']:7.1f} GB/s), "
            f"sdpa {row['sdpa_ms']:.4f} ms"
        )
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer, shorter points")
    ap.add_argument("--probe-pooled", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.probe_pooled:
        pooled_peak_probe(args.probe_pooled)
        return 0

    torch.manual_seed(0)
    if not torch.cuda.is_available():
        print("No CUDA device: the GPU benchmark cannot run here. Running the CPU checks.")
        t = time.perf_counter()
        errors = {
            "pytorch_vs_float64": check_kernels(
                "pytorch", "cpu", [torch.float64, torch.float32], 77, 32
            ),
            "triton_interpreter_vs_float64": check_kernels(
                "triton", "cpu", [torch.float32, torch.float16], 77, 32
            ),
        }
        ok = all(all_within(e) for e in errors.values())
        for name, e in errors.items():
            print(f"{name}: {json.dumps(e)}")
        print(f"correctness: {'PASS' if ok else 'FAIL'} ({time.perf_counter() - t:.1f} s)")
        pooled = cpu_pooled([4096] if args.quick else [4096, 16384, 32768])
        hopper = hopper_compile_summary()
        result = {"cuda": False, "correct": ok, "max_abs_error": errors, "cpu_pooled": pooled}
        print(json.dumps(save(result | {"sm90_compile": hopper}, "gpu_attention-cpu")))
        return 0 if ok else 1

    import triton

    name = torch.cuda.get_device_name(0)
    print(f"device: {name}, torch {torch.__version__}, triton {triton.__version__}")
    errors = {
        "triton_vs_full": check_kernels(
            "triton", "cuda", [torch.float32, torch.float16, torch.bfloat16], 1000, 128
        ),
        "triton_vs_full_d64_odd": check_kernels("triton", "cuda", [torch.bfloat16], 333, 64),
    }
    ok = all(all_within(e) for e in errors.values())
    print(f"correctness: {'PASS' if ok else 'FAIL'} {json.dumps(errors)}")
    if not ok:
        print(json.dumps({"cuda": True, "device": name, "correct": False, "max_abs_error": errors}))
        return 1
    ns = [1024, 2048, 4096] if args.quick else [1024, 2048, 4096, 8192, 16384]
    result = {
        "cuda": True,
        "device": name,
        "correct": True,
        "max_abs_error": errors,
        "forward_bf16": forward_table(ns, [64, 128]),
        "block_sparse": block_sparse_table(4096 if args.quick else 16384),
        "pooled": pooled_table([4096] if args.quick else [4096, 16384, 32768]),
        "decode": decode_table([4096] if args.quick else [4096, 32768, 131072]),
    }
    big = [
        r for r in result["forward_bf16"] if r["n"] >= 8192 and r["d"] == 128 and not r["causal"]
    ]
    if big:
        result["target_n8k_d128"] = {
            "min_tflops": min(r["ours"] for r in big),
            "min_ours_over_sdpa": min(r["ours_over_sdpa"] for r in big),
            "met": all(r["ours"] >= 550 and r["ours_over_sdpa"] >= 1.0 for r in big),
        }
    # The GPU column of the seed's claims (bench/claims.py, saved with its CPU rows);
    # bench/ is sys.path[0] when this runs as a script. A failure there is reported, and
    # does not cost the measurements above.
    try:
        from claims import gpu_update

        result["claims"] = gpu_update(args.quick)["rows"]
    except Exception as exc:  # noqa: BLE001 - any failure is reported in the JSON
        result["claims_error"] = repr(exc)
    print(json.dumps(save(result)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
