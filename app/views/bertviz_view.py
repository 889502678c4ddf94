"""bertviz head and model views (Vig 2019) that render with no network at all.

bertviz 1.4.1 builds its HTML for a notebook: require.js comes from a CDN
``<script src>``, d3 and jQuery from CDN paths in ``require.config``, and the
attention goes into the page as ``json.dumps`` of every weight. Here the weights take
one path, from the maps to the page:

1. validate the maps ``[L, H, Q, K]`` and their tokens (clear messages) and quantise
   each once to bytes, ``round(255·α)``: bertviz only ever uses α as an opacity, and an
   8-bit alpha channel cannot show more than 1/255 steps;
2. let bertviz (``html_action='return'``) build its page around 1 × 1 placeholder maps
   with the real layer and head counts: its markup, its script and its ``params``
   skeleton, with none of the weights;
3. drop its CDN ``<script src>`` and ``require.config`` block, and put in front the
   vendored d3 5.7.0, jQuery 2.2.4 and require.js 2.3.6 (assets/vendor/) as inline
   scripts, then ``define('d3')`` / ``define('jquery')`` to hand them to require.js;
4. put the bytes into ``params`` as base64 (4/3 byte per weight instead of ~20), with
   the tokens, and write it with ``<``, ``>``, ``&``, ``/``, U+2028/2029 escaped, so that
   a token such as ``</script>`` stays a string.

The page that comes out holds no ``http://`` or ``https://`` at all; that is
checked on every call.
"""

from __future__ import annotations

import base64
import functools
import json
import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

import numpy as np
from kit.errors import PageError

from views.style import visible_label

VENDOR = Path(__file__).resolve().parents[2] / "assets" / "vendor"
# Loaded in this order: d3 and jQuery first, while `define` does not exist yet, so
# they set window.d3 / window.jQuery instead of registering anonymous AMD modules.
VENDOR_SCRIPTS = ("d3-5.7.0.min.js", "jquery-2.2.4.min.js", "require-2.3.6.js")

MAX_PAYLOAD_BYTES = 8_000_000
"""Largest attention payload (encoded weights + tokens) a view may carry."""

_QUANT = 255  # α ↦ round(255·α) ∈ {0, …, 255}: one byte per weight

# bertviz 1.4.1's loaders: the require.js tag and the CDN paths for d3 and jQuery.
_CDN_SCRIPT = re.compile(r"<script src=\"[^\"]*\"></script>")
_REQUIRE_CONFIG = re.compile(r"require\.config\(\{.*?\}\);\s*", re.DOTALL)
# Its file header names the tensor2tensor file it is based on by URL.
_FILE_HEADER = re.compile(r"/\*\*\s*\n\s*\*\s*@fileoverview.*?\*/\s*", re.DOTALL)
_PARAMS = "const params = "
_PARAMS_COMMENT = "; // HACK: "
_URL = re.compile(r"https?://", re.IGNORECASE)

# The only JavaScript the page carries besides the vendored libraries and bertviz:
# the AMD names bertviz asks for, and the decoder of the base64 weights.
_GLUE = """
define('d3', [], () => window.d3);
define('jquery', [], () => window.jQuery);
function attentionStudioWeights(params) {
  // Rebuild bertviz's nested attn[L][H][Q][K] lists from one byte per weight.
  for (const d of params.attention) {
    const [L, H, Q, K] = d.shape;
    const bytes = atob(d.attn);
    const attn = [];
    let i = 0;
    for (let l = 0; l < L; l++) {
      const layer = [];
      for (let h = 0; h < H; h++) {
        const head = [];
        for (let q = 0; q < Q; q++) {
          const row = new Array(K);
          for (let k = 0; k < K; k++) row[k] = bytes.charCodeAt(i++) / QUANT;
          head.push(row);
        }
        layer.push(head);
      }
      attn.push(layer);
    }
    d.attn = attn;
    delete d.shape;
  }
  return params;
}
""".replace("QUANT", str(_QUANT))


def head_view_html(
    *,
    attention: np.ndarray | None = None,
    tokens: Sequence[str] | None = None,
    encoder_attention: np.ndarray | None = None,
    decoder_attention: np.ndarray | None = None,
    cross_attention: np.ndarray | None = None,
    encoder_tokens: Sequence[str] | None = None,
    decoder_tokens: Sequence[str] | None = None,
    layer: int | None = None,
    heads: Sequence[int] | None = None,
) -> str:
    """bertviz's head view as one self-contained HTML page.

    Give either ``attention`` [L, H, n, n] with its ``tokens`` (self-attention), or any
    of ``encoder_attention`` [L, H, S, S], ``decoder_attention`` [L, H, T, T] and
    ``cross_attention`` [L, H, T, S] with ``encoder_tokens`` (S) / ``decoder_tokens`` (T).
    Cross-attention alone is a first-class case of bertviz's own API (its 'Cross'
    view, decoder tokens on the left, encoder tokens on the right): that is how a
    Bahdanau alignment, which has no self-attention, is shown (L = H = 1).
    ``layer`` is the layer selected at first, ``heads`` the heads ticked at first.
    """
    # locals() here is exactly the arguments as given.
    parts, layer, heads = _validated(**locals())
    _check_size(parts)
    from bertviz import head_view

    skeleton = head_view(
        **_placeholders(parts), layer=layer, heads=heads, html_action="return"
    ).data
    return _offline_page(skeleton, parts)


def model_view_html(
    *,
    attention: np.ndarray | None = None,
    tokens: Sequence[str] | None = None,
    encoder_attention: np.ndarray | None = None,
    decoder_attention: np.ndarray | None = None,
    cross_attention: np.ndarray | None = None,
    encoder_tokens: Sequence[str] | None = None,
    decoder_tokens: Sequence[str] | None = None,
    layer: int | None = None,
    heads: Sequence[int] | None = None,
) -> str:
    """bertviz's model view (every layer × head as a thumbnail) as one HTML page.

    Same inputs as :func:`head_view_html`. The model view has no "initial selection",
    so here ``layer`` keeps only that layer and ``heads`` only those heads; use them to
    keep a long input within :data:`MAX_PAYLOAD_BYTES` and responsive.
    """
    # locals() here is exactly the arguments as given.
    parts, layer, heads = _validated(**locals())
    n_layers, n_heads = parts[0].weights.shape[:2]
    layers = list(range(n_layers)) if layer is None else [layer]
    kept = list(range(n_heads)) if heads is None else sorted(heads)
    parts = [p._replace(weights=p.weights[layers][:, kept]) for p in parts]
    _check_size(parts)
    from bertviz import model_view

    skeleton = model_view(
        **_placeholders(parts, n_layers, n_heads),
        display_mode="light",
        include_layers=layers,
        include_heads=kept,
        html_action="return",
    ).data
    return _offline_page(skeleton, parts)


def trace_arguments(maps: dict) -> dict:
    """The keyword arguments above for a Trace's maps (encoder_self, decoder_self, cross)."""
    if len(maps) == 1 and set(maps) <= {"encoder_self", "decoder_self"}:
        (m,) = maps.values()
        return {"attention": m.weights, "tokens": list(m.query_labels)}
    args = {}
    if "encoder_self" in maps:
        args["encoder_attention"] = maps["encoder_self"].weights
        args["encoder_tokens"] = list(maps["encoder_self"].key_labels)
    if "decoder_self" in maps:
        args["decoder_attention"] = maps["decoder_self"].weights
        args["decoder_tokens"] = list(maps["decoder_self"].query_labels)
    if "cross" in maps:
        args["cross_attention"] = maps["cross"].weights
    return args


# ---------------------------------------------------------------- validation


class _Part(NamedTuple):
    """One attention map on its way to the page, in bertviz's order of maps."""

    name: str  # bertviz's argument: attention, encoder_, decoder_ or cross_attention
    weights: np.ndarray  # uint8 [L, H, Q, K], round(255·α)
    left: list[str]  # query tokens
    right: list[str]  # key tokens


def _validated(*, layer, heads, **maps_and_tokens):
    """(parts, layer, heads): the public functions' arguments, checked."""
    parts = _validated_parts(**maps_and_tokens)
    return (parts, *_checked_selection(parts[0].weights.shape[:2], layer, heads))


def _validated_parts(
    *,
    attention,
    tokens,
    encoder_attention,
    decoder_attention,
    cross_attention,
    encoder_tokens,
    decoder_tokens,
) -> list[_Part]:
    enc_dec = {
        "encoder_attention": encoder_attention,
        "decoder_attention": decoder_attention,
        "cross_attention": cross_attention,
    }
    given = {k: v for k, v in enc_dec.items() if v is not None}
    if attention is not None:
        if given or encoder_tokens is not None or decoder_tokens is not None:
            raise ValueError(
                "Give either `attention` with `tokens` (self-attention) or the "
                "encoder/decoder/cross arguments, not both."
            )
        toks = _tokens("tokens", tokens)
        return [_Part("attention", _weights("attention", attention, toks, toks), toks, toks)]
    if not given:
        raise ValueError(
            "No attention to show: give `attention`, or `encoder_attention`, "
            "`decoder_attention` and/or `cross_attention`."
        )
    if tokens is not None:
        raise ValueError(
            "`tokens` goes with `attention`; an encoder-decoder view takes "
            "`encoder_tokens` and `decoder_tokens`."
        )
    src = _tokens("encoder_tokens", encoder_tokens) if encoder_tokens is not None else None
    tgt = _tokens("decoder_tokens", decoder_tokens) if decoder_tokens is not None else None
    sides = {
        "encoder_attention": (src, src, "encoder_tokens"),
        "decoder_attention": (tgt, tgt, "decoder_tokens"),
        "cross_attention": (tgt, src, "decoder_tokens and encoder_tokens"),
    }
    parts = []
    for name, arr in given.items():  # bertviz's order: encoder, decoder, cross
        q_toks, k_toks, needed = sides[name]
        if q_toks is None or k_toks is None:
            raise ValueError(f"`{name}` needs {needed}.")
        parts.append(_Part(name, _weights(name, arr, q_toks, k_toks), q_toks, k_toks))
    shapes = {p.name: p.weights.shape[:2] for p in parts}
    if len(set(shapes.values())) > 1:
        raise ValueError(f"The maps must have the same layers and heads [L, H]; got {shapes}.")
    return parts


def _tokens(name: str, tokens: Sequence[str] | None) -> list[str]:
    if tokens is None:
        raise ValueError(f"`{name}` is required with its attention.")
    if isinstance(tokens, str):
        raise ValueError(f"`{name}` must be a list of token strings, not one string.")
    out = [visible_label(str(t)) for t in tokens]  # a space token would draw blank
    if not out:
        raise ValueError(f"`{name}` is empty: there is nothing to show.")
    return out


def _weights(name: str, arr, q_tokens: list[str], k_tokens: list[str]) -> np.ndarray:
    """Weights checked against the tokens and the range [0, 1], as bytes [L, H, Q, K]."""
    w = np.asarray(arr, dtype=np.float64)
    if w.ndim != 4:
        raise ValueError(f"`{name}` must be [layers, heads, queries, keys]; got shape {w.shape}.")
    n_layers, n_heads, n_q, n_k = w.shape
    if n_layers == 0 or n_heads == 0:
        raise ValueError(f"`{name}` has no layers or no heads: shape {w.shape}.")
    if (n_q, n_k) != (len(q_tokens), len(k_tokens)):
        raise ValueError(
            f"`{name}` is {n_q} queries × {n_k} keys, but there are "
            f"{len(q_tokens)} query and {len(k_tokens)} key tokens."
        )
    if not np.isfinite(w).all():
        raise ValueError(f"`{name}` holds NaN or infinite weights.")
    if w.min() < -1e-6 or w.max() > 1 + 1e-6:
        raise ValueError(
            f"`{name}` must hold attention weights in [0, 1]; "
            f"got values from {w.min():.3g} to {w.max():.3g}."
        )
    return np.rint(np.clip(w, 0, 1) * _QUANT).astype(np.uint8)


def _checked_selection(
    shape: tuple[int, int], layer: int | None, heads: Sequence[int] | None
) -> tuple[int | None, list[int] | None]:
    """``layer`` / ``heads`` checked against [L, H], as plain ints (bertviz json-dumps them)."""
    n_layers, n_heads = shape
    if layer is not None and not (isinstance(layer, int | np.integer) and 0 <= layer < n_layers):
        raise ValueError(f"`layer` must be a layer index 0…{n_layers - 1}; got {layer!r}.")
    if heads is not None:
        heads = list(heads)
        if (
            not heads
            or len(set(heads)) != len(heads)
            or not all(isinstance(h, int | np.integer) and 0 <= h < n_heads for h in heads)
        ):
            raise ValueError(
                f"`heads` must be distinct head indices 0…{n_heads - 1}; got {heads!r}."
            )
        heads = [int(h) for h in heads]
    return (None if layer is None else int(layer)), heads


def _check_size(parts: list[_Part]) -> None:
    """Refuse a view whose base64 weights alone would exceed MAX_PAYLOAD_BYTES, before any work."""
    size = sum(4 * math.ceil(p.weights.size / 3) for p in parts)
    if size > MAX_PAYLOAD_BYTES:
        raise PageError(_too_big(size))


def _too_big(size: int) -> str:
    return (
        f"This attention view would carry {size / 1e6:.1f} MB of weights; the limit is "
        f"{MAX_PAYLOAD_BYTES / 1e6:.0f} MB. Use a shorter text, or fewer layers or heads."
    )


# ---------------------------------------------------------------- bertviz and the page


def _placeholders(parts: list[_Part], n_layers: int = 0, n_heads: int = 0) -> dict:
    """bertviz's inputs with a 1 × 1 map per layer and head: its page, none of the weights.

    bertviz reads only the layer and head counts from them (and checks each against its
    tokens), so one token per side keeps them tiny; the real maps go in afterwards.
    """
    import torch

    n_layers = n_layers or parts[0].weights.shape[0]
    n_heads = n_heads or parts[0].weights.shape[1]
    layer = torch.zeros(1, n_heads, 1, 1)
    args = {p.name: (layer,) * n_layers for p in parts}
    if "attention" in args:
        args["tokens"] = ["·"]
    else:
        args["encoder_tokens"] = args["decoder_tokens"] = ["·"]
    return args


def _offline_page(bertviz_html: str, parts: list[_Part]) -> str:
    """bertviz's returned HTML, made self-contained: vendored JS, compact escaped params."""
    html, n_tags = _CDN_SCRIPT.subn("", bertviz_html)
    html, n_configs = _REQUIRE_CONFIG.subn("", html)
    html = _FILE_HEADER.sub("", html, count=1)
    if (n_tags, n_configs) != (1, 1):
        raise RuntimeError(
            "bertviz's HTML no longer has the one CDN <script> and one "
            "require.config this module removes; check the bertviz version."
        )
    # bertviz's `.replace("PYTHON_PARAMS", json)` also pastes the raw JSON into the
    # comment that ends this line; the line is rebuilt without that second copy.
    start = html.index(_PARAMS) + len(_PARAMS)
    params, end = json.JSONDecoder().raw_decode(html, start)
    line_end = html.index("\n", end)
    if not html[end:line_end].startswith(_PARAMS_COMMENT):
        raise RuntimeError("bertviz's params line changed; check the bertviz version.")
    if url := _URL.search(html[:start] + html[line_end:]):
        raise RuntimeError(f"bertviz's HTML still names a URL ({url.group(0)}…).")
    html = (
        f"{html[:start]}attentionStudioWeights({_filled_params(params, parts)});{html[line_end:]}"
    )
    page = (
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8"></head>\n'
        '<body style="margin:0;background:#fff">\n'
        f"{_vendored_scripts()}\n{html}\n</body></html>\n"
    )
    if _URL.search(page):  # a check that must hold even under `python -O`
        raise RuntimeError("the offline bertviz page names a URL")
    return page


def _filled_params(params: dict, parts: list[_Part]) -> str:
    """bertviz's ``params`` with the real tokens and base64 weights, as script-safe JSON."""
    from bertviz.util import format_special_chars

    if len(params["attention"]) != len(parts):
        raise RuntimeError("bertviz made a different number of maps; check the bertviz version.")
    for d, part in zip(params["attention"], parts, strict=True):
        d["left_text"] = format_special_chars(part.left)
        d["right_text"] = format_special_chars(part.right)
        d["shape"] = list(part.weights.shape)
        d["attn"] = base64.b64encode(part.weights.tobytes()).decode("ascii")
    encoded = _script_safe_json(params)
    if len(encoded) > MAX_PAYLOAD_BYTES:
        raise PageError(_too_big(len(encoded)))
    return encoded


def _script_safe_json(obj) -> str:
    """JSON that can sit inside <script>: ASCII only, no '<', '>', '&' or '//'.

    ``ensure_ascii`` writes U+2028 / U+2029 as escapes. In JSON text '<', '>', '&'
    and '/' occur only inside strings, where ``\\u003c``, ``\\u003e``, ``\\u0026``
    and ``\\/`` mean the same; so a token ``</script>`` cannot end the script and a
    token that is a URL does not put a URL into the page.
    """
    text = json.dumps(obj, ensure_ascii=True, separators=(",", ":"))
    for char, escape in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("/", "\\/")):
        text = text.replace(char, escape)
    return text


@functools.lru_cache(maxsize=1)
def _vendored_scripts() -> str:
    """The inline <script>s for d3, jQuery, require.js and the glue (read once).

    The libraries mention URLs only in comments, XML namespace names (d3) and
    require.js's error-help text; none is fetched. Writing their ``//`` as ``\\/\\/``
    keeps each such string's value (``\\/`` is ``/`` in JS strings, regular
    expressions and comments) and keeps "no URL in the page" a total check.
    """
    parts = []
    for name in VENDOR_SCRIPTS:
        js = (VENDOR / name).read_text(encoding="utf-8")
        if "</script" in js.lower():
            raise RuntimeError(f"{name} contains '</script' and cannot be inlined as is.")
        js = re.sub(r"(https?:)//", r"\1\\/\\/", js, flags=re.IGNORECASE)
        parts.append(f"<script>{js}</script>")
    parts.append(f"<script>{_GLUE}</script>")
    return "\n".join(parts)
