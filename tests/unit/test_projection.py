"""UMAP projection: shape, determinism, small-set fallback, limits."""

import numpy as np
import pytest

from engine import projection
from engine.errors import InputError


def points(n, d=8, seed=0):
    return np.random.default_rng(seed).normal(size=(n, d)).astype(np.float32)


def test_umap_is_deterministic_for_a_seed_and_keeps_clusters_apart():
    X = np.concatenate([points(40) - 6, points(40, seed=1) + 6])
    a, b = projection.umap_2d(X, seed=3), projection.umap_2d(X, seed=3)
    assert a.shape == (80, 2) and a.dtype == np.float32
    np.testing.assert_array_equal(a, b)
    gap = np.linalg.norm(a[:40].mean(0) - a[40:].mean(0))
    spread = max(a[:40].std(0).max(), a[40:].std(0).max())
    assert gap > 2 * spread


@pytest.mark.parametrize("n", [1, 2, 3])
def test_tiny_sets_fall_back_to_pca(n):
    assert projection.method_for(n) == "pca"
    out = projection.umap_2d(points(n))
    assert out.shape == (n, 2) and np.isfinite(out).all()


def test_small_sets_still_use_umap():
    assert projection.method_for(4) == "umap"
    assert projection.umap_2d(points(6)).shape == (6, 2)


def test_exact_knn_matches_brute_force():
    X = points(300, d=5)
    idx, dist = projection.exact_knn(X, 7, block=64)
    d = np.linalg.norm(X[:, None] - X[None], axis=-1)
    ref = np.sort(d, axis=1)[:, :7]
    np.testing.assert_allclose(dist, ref, atol=1e-4)
    assert (idx[:, 0] == np.arange(300)).all()


@pytest.mark.parametrize(
    "X, message",
    [
        (np.zeros((projection.MAX_POINTS + 1, 2)), "limit"),
        (np.zeros((5, projection.MAX_DIMS + 1)), "limit"),
        (np.zeros((0, 3)), "no points"),
        (np.full((5, 3), np.nan), "NaN"),
        (np.zeros(5), "shape"),
    ],
)
def test_bad_inputs_are_refused_with_the_limit(X, message):
    with pytest.raises(InputError, match=message):
        projection.umap_2d(X)


def test_warm_up_reports_seconds_and_runs_once_in_background():
    assert projection.warm_up() > 0
    t = projection.warm_up_in_background()
    assert projection.warm_up_in_background() is t
    t.join(timeout=60)
