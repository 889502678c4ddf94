"""2-D maps of vectors (memory embeddings, queries, keys) with UMAP (McInnes et al. 2018).

umap-learn compiles its kernels with numba on the first fit of a process (seconds).
Two things keep that off the user's clock:

* numba's on-disk cache is pointed at ``~/.cache/attention-studio/numba`` (or
  ``$ATTENTION_STUDIO_CACHE/numba``) *before* umap or numba is imported, so functions
  compiled with ``cache=True`` survive a restart;
* :func:`warm_up` runs one tiny fit; a page's cached loader can start it in a
  background thread (:func:`warm_up_in_background`) so the compilation happens
  while the user is still reading.

Fewer than :data:`MIN_UMAP_POINTS` points cannot form a neighbour graph, so those
are projected with PCA instead; :func:`method_for` tells a view which one it got.
"""

from __future__ import annotations

import os
import threading
import time
import warnings
from pathlib import Path

import numpy as np

from engine.errors import InputError

CACHE_DIR = Path(
    os.environ.get("ATTENTION_STUDIO_CACHE", Path.home() / ".cache" / "attention-studio")
)
# numba reads NUMBA_CACHE_DIR once, when it is first imported: this must run before that.
os.environ.setdefault("NUMBA_CACHE_DIR", str(CACHE_DIR / "numba"))

MAX_POINTS = 10_000
MAX_DIMS = 4_096
MIN_UMAP_POINTS = 4
# umap-learn picks 500 epochs below 10k points; 200 gives the same picture in 40 % of the time.
N_EPOCHS = 200

_warm_lock = threading.Lock()
_umap_lock = threading.Lock()
_umap_module = None
_warm_thread: threading.Thread | None = None


def method_for(n_points: int) -> str:
    """``"umap"``, or ``"pca"`` for sets too small for a neighbour graph."""
    return "umap" if n_points >= MIN_UMAP_POINTS else "pca"


def _check(X: np.ndarray) -> np.ndarray:
    try:
        X = np.asarray(X, dtype=np.float32)
    except (TypeError, ValueError):  # text, ragged lists: not points
        raise InputError("projection.shape", shape=type(X).__name__) from None
    if X.ndim != 2:
        raise InputError("projection.shape", shape=X.shape)
    n, d = X.shape
    if n == 0:
        raise InputError("projection.empty")
    if n > MAX_POINTS:
        raise InputError("projection.too_many_points", n=n, limit=MAX_POINTS)
    if d > MAX_DIMS:
        raise InputError("projection.too_many_dims", n=d, limit=MAX_DIMS)
    if not np.isfinite(X).all():
        raise InputError("projection.not_finite")
    return X


def pca_2d(X: np.ndarray) -> np.ndarray:
    """Top two principal components ``[n, 2]`` (zero-padded when rank < 2)."""
    X = _check(X)
    centred = X - X.mean(axis=0, keepdims=True)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    out = np.zeros((X.shape[0], 2), dtype=np.float32)
    k = min(2, vt.shape[0])
    out[:, :k] = centred @ vt[:k].T
    return out


def umap_2d(
    X: np.ndarray, *, seed: int = 0, n_neighbors: int = 15, min_dist: float = 0.1
) -> np.ndarray:
    """UMAP embedding ``[n, 2]`` of ``X [n, d]``, deterministic for a given ``seed``.

    ``random_state`` makes umap-learn run single-threaded, which is what makes it
    reproducible (and what a shared 2-core machine wants anyway). ``n_neighbors``
    (which counts the point itself) is clipped to ``n``; fewer than
    :data:`MIN_UMAP_POINTS` points fall back to PCA.
    """
    X = _check(X)
    n = X.shape[0]
    if method_for(n) == "pca":
        return pca_2d(X)
    umap = _umap()
    k = max(2, min(int(n_neighbors), n))
    reducer = umap.UMAP(
        n_components=2,
        n_neighbors=k,
        min_dist=float(min_dist),
        random_state=int(seed),
        n_epochs=N_EPOCHS,
        # Spectral initialisation needs more points than the graph has components.
        init="spectral" if n > 16 else "random",
        precomputed_knn=exact_knn(X, k),
    )
    with warnings.catch_warnings():
        # "no NNDescent index" (we never call transform) and "random_state disables n_jobs".
        warnings.simplefilter("ignore", UserWarning)
        return np.asarray(reducer.fit_transform(X), dtype=np.float32)


def exact_knn(X: np.ndarray, k: int, block: int = 1024) -> tuple[np.ndarray, np.ndarray]:
    """Exact k nearest neighbours (self first), ``([n, k] int64, [n, k] float32)``.

    umap-learn's own path for small sets calls a Python-level metric once per pair
    (4 M calls, ≈ 8 s for 2,000 points); blockwise BLAS does the same in milliseconds.
    """
    X = X.astype(np.float64)
    sq = (X**2).sum(axis=1)
    idx = np.empty((X.shape[0], k), dtype=np.int64)
    dist = np.empty((X.shape[0], k), dtype=np.float32)
    for start in range(0, X.shape[0], block):
        rows = slice(start, start + block)
        d2 = sq[rows, None] + sq[None, :] - 2.0 * (X[rows] @ X.T)
        d2[np.arange(d2.shape[0]), np.arange(start, start + d2.shape[0])] = -1.0  # self first
        part = np.argpartition(d2, k - 1, axis=1)[:, :k]
        order = np.take_along_axis(d2, part, axis=1).argsort(axis=1, kind="stable")
        idx[rows] = np.take_along_axis(part, order, axis=1)
        dist[rows] = np.sqrt(np.maximum(np.take_along_axis(d2, idx[rows], axis=1), 0.0))
    return idx, dist


def _umap():
    """Import umap-learn (≈ 2 s) and let numba cache its kernels on disk, once per process.

    umap-learn compiles most of its kernels without ``cache=True``; turning the cache
    on for them here means a restarted server reloads machine code instead of
    recompiling it. The lock keeps the background warm-up and a page's first fit from
    importing and patching at the same time.
    """
    global _umap_module
    with _umap_lock:
        if _umap_module is None:
            import umap
            import umap.layouts
            import umap.umap_
            import umap.utils
            from numba.core.caching import NullCache
            from numba.core.registry import CPUDispatcher

            for module in (umap.umap_, umap.layouts, umap.utils):
                for obj in list(vars(module).values()):
                    if isinstance(obj, CPUDispatcher) and isinstance(obj._cache, NullCache):
                        obj.enable_caching()
            _umap_module = umap
        return _umap_module


def warm_up() -> float:
    """Fit a tiny random set so numba compiles every kernel a real fit uses; seconds taken."""
    t0 = time.perf_counter()
    X = np.random.default_rng(0).normal(size=(64, 8)).astype(np.float32)
    umap_2d(X, seed=0)
    return time.perf_counter() - t0


def warm_up_in_background() -> threading.Thread:
    """Start :func:`warm_up` once per process in a daemon thread; returns that thread."""
    global _warm_thread
    # umap imports pandas; plotly reads sys.modules["pandas"] without importing it, so a
    # page drawing a figure meanwhile could see a half-imported module. Import it here first.
    import pandas  # noqa: F401

    with _warm_lock:
        if _warm_thread is None:
            _warm_thread = threading.Thread(target=warm_up, name="umap-warm-up", daemon=True)
            _warm_thread.start()
        return _warm_thread
