"""Compile the Triton kernels for a GPU target on a machine without a GPU.

The interpreter proves the kernels compute the right numbers; it cannot see what the
real compiler does with them. Triton compiles ahead of time with no driver, so this
checks on any CPU that every kernel lowers for Hopper (sm_90), whether its matmuls use
the Hopper tensor-core instruction (``wgmma``), its shared memory, its registers and its
stack (local memory, where register spills go):

    python scripts/triton_compile_check.py            # every autotune config
    python scripts/triton_compile_check.py --quick    # one config per kernel

The last stdout line is one JSON object. Run it without TRITON_INTERPRET set.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from pathlib import Path

import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's engine

from engine.kernels import triton_attention, triton_decode, triton_pooled  # noqa: E402
from engine.kernels.dispatch import interpreting  # noqa: E402

H100_SHARED_BYTES = 232_448  # per block, opt-in maximum on sm_90


def _signature(fn, dtype: str, constexprs: dict) -> tuple[dict, dict]:
    """Types for ``fn``'s arguments: Q/K/V/O-style tensors in ``dtype``, the rest by name."""
    types = {}
    for name in fn.arg_names:
        if name in constexprs:
            types[name] = "constexpr"
        elif name in ("Q", "K", "V", "O"):
            types[name] = f"*{dtype}"
        elif name in ("LSE", "P", "O_PART", "LSE_PART"):
            types[name] = "*fp32"
        elif name in ("KV_INDEX", "KV_COUNT"):
            types[name] = "*i32"
        elif name == "qk_scale":
            types[name] = "fp32"
        else:
            types[name] = "i32"
    return types, {(fn.arg_names.index(k),): v for k, v in constexprs.items()}


def _resources(cubin: bytes) -> dict:
    """Registers and stack bytes per thread, from cuobjdump's resource usage."""
    tool = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "cuobjdump"
    path = Path("/tmp") / f"compile_check_{time.monotonic_ns()}.cubin"
    path.write_bytes(cubin)
    try:
        text = subprocess.run(
            [str(tool), "-res-usage", str(path)], capture_output=True, text=True, check=True
        ).stdout
    finally:
        path.unlink()
    usage = dict(re.findall(r"(REG|STACK):(\d+)", text))
    return {"registers": int(usage["REG"]), "stack_bytes": int(usage["STACK"])}


def compile_one(fn, dtype: str, constexprs: dict, arch: int, **options) -> dict:
    types, consts = _signature(fn, dtype, constexprs)
    kernel = triton.compile(
        ASTSource(fn=fn, signature=types, constexprs=consts),
        target=GPUTarget("cuda", arch, 32),
        options=options,
    )
    row = {"kernel": fn.__name__, "dtype": dtype, **constexprs, **options}
    row["shared_bytes"] = kernel.metadata.shared
    row["wgmma"] = "wgmma.mma_async" in kernel.asm["ptx"]
    return row | _resources(kernel.asm["cubin"])


def cases(quick: bool):
    """(kernel, dtype, constexprs, launch options) for every kernel the dispatcher can launch."""
    configs = triton_attention.hopper_configs()
    for d in (64, 128):
        for causal in (False, True):
            for cfg in configs[:1] if quick else configs:
                if quick and (d, causal) != (128, False):
                    continue
                yield (
                    triton_attention._attn_fwd,
                    "bf16",
                    {"HEAD_DIM": d, "CAUSAL": causal, "PRECISION": "tf32", **cfg.kwargs},
                    {"num_warps": cfg.num_warps, "num_stages": cfg.num_stages},
                )
    for d, block in ((64, 64),) if quick else ((64, 64), (128, 64), (64, 128), (128, 128)):
        const = {
            "HEAD_DIM": d,
            "CAUSAL": True,
            "WINDOWED": True,
            "PRECISION": "tf32",
            "BLOCK": block,
        }
        yield (
            triton_attention._block_sparse_fwd,
            "bf16",
            const,
            triton_attention.sparse_launch(block, d),
        )
    for d in (64,) if quick else (64, 128):
        for has_lse, is_max in ((False, False), (True, True)):
            const = {"HEAD_DIM": d, "CAUSAL": True, "HAS_LSE": has_lse, "MAX": is_max}
            const |= {"POOL": 128, "PRECISION": "tf32", "BLOCK_M": 64, "BLOCK_N": 128}
            yield triton_pooled._pooled_map, "bf16", const, triton_pooled.LAUNCH
    for d in (128,) if quick else (64, 128):
        const = {"HEAD_DIM": d, "BLOCK_N": triton_decode.BLOCK_N_GPU}
        yield triton_decode._decode_partial, "bf16", const, triton_decode.LAUNCH
        const = {"HEAD_DIM": d, "SPLITS": 128}
        yield triton_decode._decode_combine, "bf16", const, triton_decode.LAUNCH


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Compile the Triton kernels for a GPU target.")
    ap.add_argument("--arch", type=int, default=90, help="CUDA compute capability × 10")
    ap.add_argument("--quick", action="store_true", help="one config per kernel")
    args = ap.parse_args(argv)
    if interpreting():
        print("TRITON_INTERPRET is set: the kernels are interpreted, not compiled; unset it.")
        return 2
    rows = []
    for fn, dtype, const, options in cases(args.quick):
        t = time.perf_counter()
        row = compile_one(fn, dtype, const, args.arch, **options)
        row["compile_s"] = round(time.perf_counter() - t, 1)
        rows.append(row)
        print(
            f"{row['kernel']:<18} {json.dumps(const)} {json.dumps(options)}: "
            f"regs {row['registers']}, stack {row['stack_bytes']} B, "
            f"shared {row['shared_bytes']} B, wgmma {row['wgmma']}"
        )
    ok = all(r["shared_bytes"] <= H100_SHARED_BYTES for r in rows)
    print(
        json.dumps({"arch": args.arch, "compiled": len(rows), "fits_shared": ok, "kernels": rows})
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
