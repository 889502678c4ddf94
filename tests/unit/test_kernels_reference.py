"""The PyTorch path of engine.kernels against naive float64 attention, the block-mask
builders, and the dispatch rules (which path runs; nothing imported too early)."""

import math
import subprocess
import sys

import pytest
import torch

from engine import kernels as K
from engine.kernels import reference


def naive(q, k, v=None, *, causal=False, allowed=None):
    """Full float64 attention: (out, lse, p) with p the n_q × n_k probabilities."""
    q, k = q.double(), k.double()
    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    n_q, n_k = s.shape[-2:]
    ok = torch.ones(n_q, n_k, dtype=torch.bool)
    if causal:
        ok &= torch.arange(n_k)[None, :] <= torch.arange(n_q)[:, None] + n_k - n_q
    if allowed is not None:
        ok = ok & allowed
    s = s.masked_fill(~ok, -math.inf)
    lse = torch.logsumexp(s, -1)
    p = torch.exp(s - lse[..., None]).nan_to_num(0.0)  # rows without keys: p = 0
    out = None if v is None else p @ v.double()
    return out, lse, p


def expand_blocks(block_mask, block, n):
    """Block mask [H|1, nb, nb] → element mask [H|1, n, n]."""
    return block_mask.repeat_interleave(block, 1).repeat_interleave(block, 2)[:, :n, :n]


def pool_naive(p, block, reduce):
    """Pool [..., n_q, n_k] probabilities over block × block cells (short last blocks)."""
    n_q, n_k = p.shape[-2:]
    nb_q, nb_k = -(-n_q // block), -(-n_k // block)
    padded = torch.nn.functional.pad(p, (0, nb_k * block - n_k, 0, nb_q * block - n_q))
    cells = padded.unflatten(-1, (nb_k, block)).unflatten(-3, (nb_q, block))  # (.., I, i, J, j)
    if reduce == "max":
        return cells.amax(dim=(-1, -3))
    sizes = reference.block_counts(n_q, block)[:, None] * reference.block_counts(n_k, block)
    return cells.sum(dim=(-1, -3)) / sizes.double()


@pytest.fixture(params=[reference.CHUNK_BYTES, 4096], ids=["one-chunk", "many-chunks"])
def chunking(request, monkeypatch):
    """Run each reference test with one query chunk and with many tiny ones."""
    monkeypatch.setattr(reference, "CHUNK_BYTES", request.param)


@pytest.fixture
def gen():
    """Fresh random inputs on every run; the seed is in the test's failure output."""
    seed = torch.seed()
    print(f"seed={seed}")
    return torch.Generator().manual_seed(seed)


def randn(gen, *shape, dtype=torch.float64):
    return torch.randn(*shape, generator=gen, dtype=dtype)


@pytest.mark.parametrize("n_q,n_k", [(1, 1), (37, 37), (5, 70), (70, 40)])
@pytest.mark.parametrize("causal", [False, True])
def test_attention_matches_naive(chunking, gen, n_q, n_k, causal):
    q, k, v = randn(gen, 2, 3, n_q, 16), randn(gen, 2, 3, n_k, 16), randn(gen, 2, 3, n_k, 16)
    out, lse = K.attention(q, k, v, causal=causal, path="pytorch")
    ref_out, ref_lse, _ = naive(q, k, v, causal=causal)
    assert out.dtype == q.dtype and lse.dtype == torch.float32
    assert torch.allclose(out, ref_out, atol=1e-10)
    assert torch.equal(torch.isinf(lse), torch.isinf(ref_lse))  # empty rows: lse = −inf
    assert torch.allclose(lse.double().nan_to_num(0, 0, 0), ref_lse.nan_to_num(0, 0, 0), atol=1e-5)
    if causal and n_q > n_k:
        assert (out[:, :, : n_q - n_k] == 0).all()


def test_attention_keeps_half_precision_dtype(gen):
    q, k, v = (randn(gen, 1, 2, 33, 32, dtype=torch.float16) for _ in range(3))
    out, lse = K.attention(q, k, v)
    ref_out, ref_lse, _ = naive(q, k, v)
    assert out.dtype == torch.float16
    assert torch.allclose(out.double(), ref_out, atol=2e-3)
    assert torch.allclose(lse.double(), ref_lse, atol=1e-4)


@pytest.mark.parametrize("pattern", ["bigbird", "longformer", "window"])
@pytest.mark.parametrize("causal", [False, True])
def test_block_sparse_matches_masked_naive(chunking, gen, pattern, causal):
    n, bs, H = 77, 16, 3
    if pattern == "bigbird":
        bm = K.bigbird_block_mask(n, block_size=bs, heads=H, random_blocks=1, generator=gen)
    elif pattern == "longformer":
        bm = K.longformer_block_mask(n, window=20, global_tokens=[0, 50], block_size=bs)
    else:
        bm = K.sliding_window_block_mask(n, window=10, block_size=bs)
    bm = bm.clone()
    bm[:, 1, :] = False  # a query block with no kept block at all
    q, k, v = (randn(gen, 2, H, n, 32) for _ in range(3))
    out, lse = K.block_sparse_attention(q, k, v, bm, block_size=bs, causal=causal, path="pytorch")
    ref_out, ref_lse, _ = naive(q, k, v, causal=causal, allowed=expand_blocks(bm, bs, n)[None])
    assert torch.allclose(out, ref_out, atol=1e-10)
    assert torch.isinf(lse[:, :, bs : 2 * bs]).all() and (out[:, :, bs : 2 * bs] == 0).all()
    assert torch.equal(torch.isinf(lse), torch.isinf(ref_lse))


def test_block_sparse_with_all_blocks_equals_dense(gen):
    q, k, v = (randn(gen, 1, 2, 50, 16) for _ in range(3))
    full = torch.ones(1, 4, 4, dtype=torch.bool)
    for causal in (False, True):
        sparse = K.block_sparse_attention(q, k, v, full, block_size=16, causal=causal)
        dense = K.attention(q, k, v, causal=causal)
        assert all(torch.allclose(a, b, atol=1e-10) for a, b in zip(sparse, dense, strict=True))


@pytest.mark.parametrize("n_q,n_k,block", [(77, 77, 16), (50, 83, 32), (83, 50, 7), (9, 9, 64)])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("reduce", ["mean", "max"])
def test_pooled_map_matches_pooled_naive(chunking, gen, n_q, n_k, block, causal, reduce):
    q, k = randn(gen, 2, 2, n_q, 16), randn(gen, 2, 2, n_k, 16)
    _, ref_lse, p = naive(q, k, causal=causal)
    expected = pool_naive(p, block, reduce)
    for lse in (None, ref_lse.float()):
        pooled = K.pooled_attention_map(
            q, k, block=block, causal=causal, reduce=reduce, lse=lse, path="pytorch"
        )
        assert pooled.dtype == torch.float32 and pooled.shape == expected.shape
        assert torch.allclose(pooled.double(), expected, atol=1e-6)


@pytest.mark.parametrize("causal", [False, True])
def test_mean_pooled_rows_sum_to_one_after_key_block_sizes(gen, causal):
    n, block = 100, 16
    q, k = randn(gen, 1, 2, n, 32), randn(gen, 1, 2, n, 32)
    pooled = K.pooled_attention_map(q, k, block=block, causal=causal)
    mass = (pooled * reference.block_counts(n, block)).sum(-1)  # Σ_J |J| · P̄_IJ
    assert torch.allclose(mass, torch.ones_like(mass), atol=1e-5)
    max_map = K.pooled_attention_map(q, k, block=block, causal=causal, reduce="max")
    assert (max_map >= pooled - 1e-7).all() and (max_map <= 1).all()


@pytest.mark.parametrize("causal", [False, True])
def test_large_scores_take_the_max_shifted_path(chunking, gen, causal):
    """|s_ij| far above 88 would overflow exp without the row-max shift."""
    q, k, v = (randn(gen, 1, 2, 45, 16) * 6 for _ in range(3))
    assert not reference.shift_free(q, k, 0.25)
    ref_out, ref_lse, p = naive(q, k, v, causal=causal)
    out, lse = K.attention(q, k, v, causal=causal)
    assert torch.allclose(out, ref_out, atol=1e-9)
    assert torch.allclose(lse.double(), ref_lse, rtol=1e-6)
    bm = torch.ones(1, 3, 3, dtype=torch.bool)
    out, _ = K.block_sparse_attention(q, k, v, bm, block_size=16, causal=causal)
    assert torch.allclose(out, ref_out, atol=1e-9)
    for reduce in ("mean", "max"):
        pooled = K.pooled_attention_map(q, k, block=16, causal=causal, reduce=reduce)
        assert torch.allclose(pooled.double(), pool_naive(p, 16, reduce), atol=1e-6)


def test_pooled_chunks_stay_under_a_tenth_of_the_full_map():
    n = 32_768
    rows = reference.chunk_rows(n, n, batch_heads=1)
    assert rows * n * 4 <= 0.1 * n * n * 4


def test_decode_step_is_the_last_row_of_causal_attention(gen):
    q, k, v = (randn(gen, 2, 3, 29, 32) for _ in range(3))
    full, full_lse = K.attention(q, k, v, causal=True)
    out, lse = K.decode_step(q[:, :, -1:], k, v)
    assert out.shape == (2, 3, 1, 32) and lse.shape == (2, 3, 1)
    assert torch.allclose(out, full[:, :, -1:], atol=1e-12)
    assert torch.allclose(lse, full_lse[:, :, -1:])


def test_sliding_window_blocks_cover_exactly_the_window():
    n, bs, window = 100, 16, 20
    bm = K.sliding_window_block_mask(n, window=window, block_size=bs)
    i = torch.arange(n)
    in_window = (i[:, None] - i[None, :]).abs() <= window
    covered = expand_blocks(bm, bs, n)[0]
    assert (covered | ~in_window).all()  # every in-window pair is computed
    # …and every kept block holds at least one in-window pair (no wasted block).
    holds = torch.nn.functional.pad(in_window, (0, 12, 0, 12)).unflatten(0, (7, bs))
    holds = holds.unflatten(2, (7, bs)).any(dim=(1, 3))
    assert torch.equal(bm[0], holds)


def test_longformer_globals_see_and_are_seen_by_all_blocks():
    bm = K.longformer_block_mask(300, window=32, global_tokens=[130], block_size=64)[0]
    assert bm[2].all() and bm[:, 2].all()
    assert not bm[0, 4]  # far blocks outside the window and not global stay empty
    with pytest.raises(ValueError, match="outside"):
        K.longformer_block_mask(300, window=32, global_tokens=[300])


def test_bigbird_has_window_globals_and_random_blocks_per_head(gen):
    nb, heads = 16, 4
    bm = K.bigbird_block_mask(nb * 64, heads=heads, random_blocks=2, generator=gen)
    assert bm.shape == (heads, nb, nb)
    assert bm[:, 0].all() and bm[:, :, 0].all()  # one global block
    band = torch.ones(nb, nb, dtype=torch.bool).triu(-1).tril(1)
    assert (bm | ~band).all()
    extra = (bm & ~band).sum(-1)[:, 1:] - 1  # beyond window and the global column
    assert (extra <= 2).all()
    assert 0 < K.kept_fraction(bm) < 1
    assert K.kept_fraction(torch.ones(1, 4, 4, dtype=torch.bool), causal=True) == 1.0


def test_auto_path_on_cpu_is_pytorch_and_forced_triton_needs_cuda_or_interpreter(monkeypatch):
    assert K.active_path("cpu") == "pytorch"
    q = torch.randn(1, 1, 8, 32)
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    with pytest.raises(RuntimeError, match="CUDA"):
        K.attention(q, q, q, path="triton")
    with pytest.raises(ValueError, match="path must be"):
        K.attention(q, q, q, path="cuda")


def test_unsupported_input_falls_back_on_auto_and_is_refused_when_forced(monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    q = torch.randn(1, 1, 8, 48)  # head dim 48 has no Triton kernel
    out, _ = K.attention(q, q, q)
    assert out.shape == q.shape
    with pytest.raises(ValueError, match="head dim 48"):
        K.attention(q, q, q, path="triton")


def test_shape_errors_name_the_expected_shapes():
    q = torch.randn(1, 2, 40, 32)
    with pytest.raises(ValueError, match=r"block_mask must be \[1 or 2, 3, 3\]"):
        K.block_sparse_attention(q, q, q, torch.ones(1, 2, 2, dtype=torch.bool), block_size=16)
    with pytest.raises(ValueError, match="one query"):
        K.decode_step(q, q, q)
    with pytest.raises(ValueError, match="at least one key"):
        K.decode_step(q[:, :, :1], q[:, :, :0], q[:, :, :0])


def test_import_and_cpu_calls_leave_triton_and_cuda_alone():
    code = (
        "import sys, torch, engine.kernels as K\n"
        "q = torch.randn(1, 2, 64, 32)\n"
        "K.attention(q, q, q); K.pooled_attention_map(q, q, block=16)\n"
        "K.decode_step(q[:, :, :1], q, q)\n"
        "assert 'triton' not in sys.modules, 'triton imported on the CPU path'\n"
        "assert not torch.cuda.is_initialized()\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


@pytest.mark.parametrize("n_q,n_k", [(1, 1), (37, 37), (5, 70), (70, 40)])
@pytest.mark.parametrize("causal", [False, True])
def test_chunked_fallback_matches_naive(chunking, gen, monkeypatch, n_q, n_k, causal):
    """The chunked code still answers where torch's fused kernel does not fit."""
    monkeypatch.setattr(reference, "_FUSED", None)
    q, k, v = randn(gen, 2, 3, n_q, 16), randn(gen, 2, 3, n_k, 16), randn(gen, 2, 3, n_k, 16)
    out, lse = reference.attention(q, k, v, causal=causal)
    ref_out, ref_lse, _ = naive(q, k, v, causal=causal)
    assert torch.allclose(out, ref_out, atol=1e-10)
    assert torch.allclose(lse.double().nan_to_num(0, 0, 0), ref_lse.nan_to_num(0, 0, 0), atol=1e-5)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_fused_path_equals_float64_reference_with_lse(gen, causal, dtype):
    q, k, v = (randn(gen, 2, 3, 77, 32, dtype=dtype) for _ in range(3))
    assert reference.fused_fits(q, k, v, causal)
    out, lse = reference.attention(q, k, v, causal=causal, scale=0.2)
    s = q.double() @ k.double().transpose(-2, -1) * 0.2
    if causal:
        s = s.masked_fill(~torch.ones(77, 77, dtype=torch.bool).tril(), -math.inf)
    ref_lse = torch.logsumexp(s, -1)
    ref_out = torch.softmax(s, -1) @ v.double()
    assert out.dtype == dtype and lse.dtype == torch.float32
    assert torch.allclose(out.double(), ref_out, atol=1e-10 if dtype == torch.float64 else 1e-5)
    assert torch.allclose(lse.double(), ref_lse, atol=1e-5)


def test_fused_path_is_not_used_where_its_causal_alignment_differs():
    q, k = torch.randn(1, 1, 5, 8), torch.randn(1, 1, 9, 8)
    assert not reference.fused_fits(q, k, k, causal=True)
    assert reference.fused_fits(q, k, k, causal=False)
    assert not reference.fused_fits(q[:, :, :0], k, k, causal=False)  # the kernel crashes


@pytest.mark.parametrize("n_q,n_k", [(37, 37), (5, 70), (70, 40)])
@pytest.mark.parametrize("causal", [False, True])
def test_probabilities_from_lse_equal_naive(chunking, gen, n_q, n_k, causal):
    q, k, v = randn(gen, 2, 3, n_q, 16), randn(gen, 2, 3, n_k, 16), randn(gen, 2, 3, n_k, 16)
    _, lse = K.attention(q, k, v, causal=causal)
    p = reference.attention_probabilities(q, k, lse, causal=causal)
    _, _, ref_p = naive(q, k, causal=causal)
    assert p.shape == ref_p.shape and p.dtype == q.dtype
    assert torch.allclose(p, ref_p, atol=1e-6)


def test_exact_attention_reads_views_whose_last_dim_is_not_contiguous():
    """q from an einsum has strides (…, 1, T): the fused CPU kernel needs contiguous rows."""
    torch.manual_seed(0)
    w, x = torch.randn(2, 16, 8), torch.randn(1, 5, 8)
    q = torch.einsum("hed,btd->bhte", w, x)
    assert q.stride(-1) != 1
    out, _ = reference.attention(q, q, q, causal=True)
    want = torch.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True)
    assert torch.allclose(out, want, atol=1e-5)
