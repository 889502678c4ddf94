"""Every Triton kernel against the PyTorch path, run on the CPU by the Triton interpreter.

Triton decides between compiling and interpreting when ``triton.language`` and each
``@triton.jit`` function are created, so TRITON_INTERPRET=1 must be set before triton
is first imported in the process; this module sets it at the top, during collection
(engine.kernels imports triton only when a kernel first runs). The variable then stays
set for the rest of the session: triton, once imported interpreted, stays interpreted.
If something imported triton for real before this module was collected, the tests
run instead in a fresh interpreter process.

Shapes are tiny because the interpreter runs each program in Python; bfloat16 is left
out because ``tl.dot`` on bf16 is wrong in the interpreter.
"""

import os
import subprocess
import sys

TRITON_PREIMPORTED = "triton" in sys.modules
os.environ["TRITON_INTERPRET"] = "1"

import pytest  # noqa: E402
import torch  # noqa: E402

from engine import kernels as K  # noqa: E402
from engine.kernels import reference  # noqa: E402

triton = pytest.importorskip("triton")


def _interpreted() -> bool:
    from triton.runtime.interpreter import InterpretedFunction

    return isinstance(triton.language.standard.zeros, InterpretedFunction)


IN_PROCESS = not TRITON_PREIMPORTED or _interpreted()
interpreted = pytest.mark.skipif(not IN_PROCESS, reason="triton was imported uninterpreted")


@pytest.mark.skipif(IN_PROCESS, reason="the kernels run interpreted in this process")
def test_kernels_in_a_fresh_interpreter_process():
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    run = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", __file__]
    assert subprocess.run(run, env=env, timeout=300).returncode == 0


@pytest.fixture
def gen():
    """Fresh random inputs on every run; the seed is in the test's failure output."""
    seed = torch.seed()
    print(f"seed={seed}")
    return torch.Generator().manual_seed(seed)


TOL = {torch.float32: 2e-5, torch.float16: 3e-3}


def randn(gen, *shape, dtype):
    return torch.randn(*shape, generator=gen).to(dtype)


def assert_same(ours, ref, dtype):
    """Outputs within the dtype's tolerance; lse equal, including which rows are −inf."""
    (out, lse), (ref_out, ref_lse) = ours, ref
    assert out.dtype == dtype and out.shape == ref_out.shape
    assert torch.allclose(out.float(), ref_out.float(), atol=TOL[dtype])
    assert lse.dtype == torch.float32
    assert torch.equal(torch.isinf(lse), torch.isinf(ref_lse))
    finite = torch.isfinite(ref_lse)
    assert torch.allclose(lse[finite], ref_lse[finite], atol=1e-4)


@interpreted
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("n_q,n_k,d", [(77, 77, 32), (5, 70, 64), (70, 40, 32)])
@pytest.mark.parametrize("causal", [False, True])
def test_fused_attention(gen, dtype, n_q, n_k, d, causal):
    q = randn(gen, 2, 2, n_q, d, dtype=dtype)
    k, v = (randn(gen, 2, 2, n_k, d, dtype=dtype) for _ in range(2))
    ours = K.attention(q, k, v, causal=causal, path="triton")
    assert_same(ours, reference.attention(q, k, v, causal=causal), dtype)


@interpreted
@pytest.mark.parametrize("tiles", [(64, 32), (16, 32)])
@pytest.mark.parametrize("n_q,n_k", [(77, 77), (70, 45)])
def test_fused_attention_with_unequal_tiles(gen, monkeypatch, tiles, n_q, n_k):
    """BLOCK_M ≠ BLOCK_N, as the GPU configs use: the causal split into unmasked and
    diagonal key tiles must still cover each row's keys exactly once."""
    monkeypatch.setattr("engine.kernels.triton_attention.INTERPRETER_TILES", tiles)
    q = randn(gen, 1, 2, n_q, 32, dtype=torch.float32)
    k, v = (randn(gen, 1, 2, n_k, 32, dtype=torch.float32) for _ in range(2))
    ours = K.attention(q, k, v, causal=True, path="triton")
    assert_same(ours, reference.attention(q, k, v, causal=True), torch.float32)


@interpreted
def test_fused_attention_reads_strided_inputs(gen):
    """A [B, N, H, D] tensor viewed as [B, H, N, D] (as projections produce) needs no copy."""
    qkv = randn(gen, 1, 45, 3, 2, 32, dtype=torch.float32)  # (B, N, 3, H, D)
    q, k, v = (t.transpose(1, 2) for t in qkv.unbind(2))  # (B, H, N, D), strided
    ours = K.attention(q, k, v, causal=True, path="triton")
    assert_same(ours, reference.attention(q, k, v, causal=True), torch.float32)


@interpreted
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("block_size,per_head", [(16, True), (32, False)])
@pytest.mark.parametrize("causal", [False, True])
def test_block_sparse_attention(gen, dtype, block_size, per_head, causal):
    n, H = 77, 3
    bm = K.bigbird_block_mask(
        n, block_size=block_size, heads=H if per_head else 1, random_blocks=1, generator=gen
    )
    bm[:, 1, :] = False  # a query block that computes nothing: out 0, lse −inf
    q, k, v = (randn(gen, 2, H, n, 32, dtype=dtype) for _ in range(3))
    kwargs = dict(block_size=block_size, causal=causal)
    ours = K.block_sparse_attention(q, k, v, bm, path="triton", **kwargs)
    assert_same(ours, reference.block_sparse_attention(q, k, v, bm, **kwargs), dtype)


@interpreted
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("n_q,n_k,block", [(77, 77, 32), (50, 83, 16)])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("reduce", ["mean", "max"])
def test_pooled_map(gen, dtype, n_q, n_k, block, causal, reduce):
    q, k = randn(gen, 1, 2, n_q, 32, dtype=dtype), randn(gen, 1, 2, n_k, 32, dtype=dtype)
    lse = reference.attention(q, k, k, causal=causal)[1] if dtype == torch.float32 else None
    kwargs = dict(block=block, causal=causal, reduce=reduce, lse=lse)
    ours = K.pooled_attention_map(q, k, path="triton", **kwargs)
    ref = reference.pooled_attention_map(q, k, **kwargs)
    assert ours.dtype == torch.float32 and ours.shape == ref.shape
    assert torch.allclose(ours, ref, atol=1e-5)


@interpreted
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("T", [1, 37, 300])
def test_decode_step_on_a_growing_cache(gen, dtype, T):
    """A preallocated cache sliced to its first T entries: split-K over T, then combine."""
    B, H, T_max, D = 2, 2, 320, 64
    k_cache, v_cache = (randn(gen, B, H, T_max, D, dtype=dtype) for _ in range(2))
    q = randn(gen, B, H, 1, D, dtype=dtype)
    k, v = k_cache[:, :, :T], v_cache[:, :, :T]
    ours = K.decode_step(q, k, v, path="triton")
    assert_same(ours, reference.decode_step(q, k, v), dtype)


@interpreted
@pytest.mark.parametrize("causal", [False, True])
def test_block_sparse_token_window_matches_the_longformer_pattern(gen, causal):
    from engine import patterns

    n, bs, w, g = 77, 16, 5, 2
    bm = K.longformer_block_mask(n, window=w, global_tokens=range(g), block_size=bs)
    q, k, v = (randn(gen, 1, 2, n, 32, dtype=torch.float32) for _ in range(3))
    kw = dict(block_size=bs, causal=causal, window=w, n_global=g)
    ours = K.block_sparse_attention(q, k, v, bm, path="triton", **kw)
    ref = reference.block_sparse_attention(q, k, v, bm, **kw)
    assert_same(ours, ref, torch.float32)
    from engine.attention import scaled_dot_product_attention

    allowed = patterns.longformer_pattern(n, window=w, n_global=g)
    want, _ = scaled_dot_product_attention(q, k, v, allowed, causal=causal)
    assert torch.allclose(ours[0], want, atol=2e-5)


@interpreted
@pytest.mark.parametrize(
    "name,hp",
    [("longformer", {"window": 5, "globals": 2}), ("bigbird", {"block": 16, "random_blocks": 1})],
)
@pytest.mark.parametrize("causal", [False, True])
def test_sparse_variants_on_the_triton_kernel_match_their_cpu_path(
    gen, monkeypatch, name, hp, causal
):
    import importlib

    from engine.variants import get

    q, k, v = (randn(gen, 1, 2, 70, 32, dtype=torch.float32) for _ in range(3))
    cpu = get(name).run(q, k, v, causal=causal, hp=hp)
    module = importlib.import_module(f"engine.variants.{name}")
    monkeypatch.setattr(module, "on_triton", lambda *a: True)  # as on CUDA, interpreted
    tri = get(name).run(q, k, v, causal=causal, hp=hp)
    assert cpu.path == "pytorch" and tri.path == "triton"
    assert any("triton" in note for note in tri.notes)
    assert torch.allclose(tri.out, cpu.out, atol=2e-5)
    assert torch.allclose(tri.weights, cpu.weights, atol=2e-5)
    assert torch.equal(tri.pattern.expand_as(cpu.pattern), cpu.pattern)
