"""Q/K/V of any shape and magnitude (to 1e20 and past float32) into every variant and the
lab's comparison. Only a result or the engine's InputError may come back, and a result's
softmax-kind map has rows summing to 1 ± 1e-5 (or 0 where a query sees no key)."""

from __future__ import annotations

import numpy as np
import torch
from hypothesis import given
from hypothesis import strategies as st

from engine.variants import compare
from engine.variants.registry import REGISTRY, get
from tests.fuzz.strategies import only_input_errors, qkv_arrays

torch.set_num_threads(1)


def _tensors(arrays):
    with np.errstate(over="ignore"):
        return tuple(torch.from_numpy(a.astype(np.float32)) for a in arrays)


@given(name=st.sampled_from(sorted(REGISTRY)), arrays=qkv_arrays(), causal=st.booleans())
def test_every_variant_on_any_qkv(name, arrays, causal):
    q, k, v = _tensors(arrays)
    with only_input_errors():
        tr = get(name).trace(q, k, v, causal=causal)
        m = tr.maps["attention"]
        assert np.isfinite(m.weights).all() and np.isfinite(tr.vectors["output"]).all()
        if m.normalized:
            sums = m.weights.sum(-1, dtype=np.float64)
            assert np.all((np.abs(sums - 1) <= 1e-5) | (sums == 0)), name


@given(
    names=st.lists(st.sampled_from(sorted(REGISTRY)), min_size=0, max_size=3, unique=True),
    arrays=qkv_arrays(max_n=16, max_d=8),
)
def test_the_lab_comparison_on_any_qkv(names, arrays):
    q, k, v = _tensors(arrays)
    labels = [str(i) for i in range(q.shape[-2])]
    with only_input_errors():
        traces, rows = compare.run_all(names, q, k, v, labels)
        assert len(rows) == len(names)


@st.composite
def masks(draw, b: int, n: int):
    """None, right-padding ``[B, 1, 1, N]`` of any lengths (0 included), or any bool mask."""
    kind = draw(st.sampled_from(["none", "padding", "any"]))
    if kind == "none":
        return None
    if kind == "padding":
        lengths = torch.tensor(draw(st.lists(st.integers(0, n), min_size=b, max_size=b)))
        return (torch.arange(n)[None, :] < lengths[:, None])[:, None, None, :]
    bits = draw(st.lists(st.booleans(), min_size=b * n * n, max_size=b * n * n))
    return torch.tensor(bits).view(b, 1, n, n)


@given(name=st.sampled_from(sorted(REGISTRY)), arrays=qkv_arrays(max_n=12), data=st.data())
def test_every_variant_as_an_attention_function_with_any_mask(name, arrays, data):
    """The path a model takes (``Variant.attend``): padded batches, any other mask."""
    q, k, v = _tensors(arrays)
    mask = data.draw(masks(q.shape[0], q.shape[-2]))
    with only_input_errors():
        attend = get(name).attend(None)
        out, weights = attend(q, k, v, mask=mask, causal=data.draw(st.booleans()))
        assert out.shape == q.shape[:-1] + v.shape[-1:]
