"""A view's state in its URL, so that a copied link opens the same view.

Widgets take their first value from ``st.query_params`` (``url_default``, ``url_index``)
and write their current value back (``url_sync``). Parameter names are short and the same
on every page (``model``, ``text``, ``section``, ``layer``, ``head``, ``step`` …), and values
are ids, never translated labels, so a link copied in 中文 opens the same view in English.

A value that does not parse, is not a known choice, is out of range or is longer than
``MAX_CHARS`` (a stale model name, a mangled or hostile link) is dropped from the URL and
the widget keeps its default, with a one-line note: a bad link gives a view, never an error.

Every parameter is declared once, in its page's table (``kit.params.PAGES``): a link's
value is parsed by its declaration before the widget's own checks, and a widget offering
a choice or a range its page's table does not declare raises ``Undeclared`` (the page's
mistake, found by the page's tests, never by a visitor's link).
"""

from __future__ import annotations

import html
import os
from urllib.parse import urlencode, urlsplit

import streamlit as st

from kit.i18n import md_escape, t
from kit.params import LINK_PARAMS, Int, Num, OneOf, Text, Undeclared, declared
from kit.textbox import gated_text

# Longer than any input a page accepts (the longest is a 2,000-character story), so a
# value past this is a broken or hostile link, not a view.
MAX_CHARS = 2_500
GLOBAL = LINK_PARAMS  # parameters of the whole studio, not of one page's view
SHOWN_CHARS = 40  # of a dropped value, in the note that says so
MAX_LISTED = 12  # choices named in that note; more, and the widget itself lists them
PAGE_KEY = "kit-page"  # the page drawn now (kit.page.page_top), whose table is read


def _spec(param: str):
    """``param``'s declaration on the page drawn now (None: the studio's, or no page)."""
    page = st.session_state.get(PAGE_KEY)
    return None if page is None else declared(page, param)


def flag(raw: str) -> bool:
    """A boolean parameter: 1/0, true/false, on/off."""
    value = raw.strip().lower()
    if value in ("1", "true", "on", "yes"):
        return True
    if value in ("0", "false", "off", "no"):
        return False
    raise ValueError(raw)


def names(raw: str) -> list[str]:
    """A list of names written ``linformer,performer``."""
    return [part for part in raw.split(",") if part]


def ints(raw: str) -> list[int]:
    """A list of integers written ``0,1,4``."""
    return [int(part) for part in raw.split(",") if part.strip()]


def _ignore(param: str, raw: str | None = None, wanted: str | None = None) -> None:
    """Drop a value the page cannot use and say so once, next to the widget it was for:
    what the link held and, where the page can say it in a phrase, what it takes."""
    if param in st.query_params:
        del st.query_params[param]
    if raw is None or wanted is None:
        st.info(t("links.ignored", name=param))
        return
    shown = raw if len(raw) <= SHOWN_CHARS else raw[:SHOWN_CHARS] + "…"
    st.info(t("links.ignored_value", name=param, value=md_escape(shown), wanted=wanted))


def _wanted(spec, choices, lo, hi) -> str | None:
    """What a parameter takes, in a phrase: "a whole number from 2 to 1024 in steps of 2",
    "one of: en-fr, dates"; None where a phrase would be a list too long to read."""
    if isinstance(choices, range) and len(choices) > MAX_LISTED:
        return t("links.takes_steps", lo=choices.start, hi=choices[-1], step=choices.step)
    if choices is not None:
        listed = [str(c) for c in choices]
        return (
            t("links.takes_one_of", choices=", ".join(listed))
            if len(listed) <= MAX_LISTED
            else None
        )
    if isinstance(spec, OneOf) and len(spec.ids) <= MAX_LISTED:
        return t("links.takes_one_of", choices=", ".join(spec.ids))
    if isinstance(spec, Text):
        return t("links.takes_text", limit=spec.limit)
    if lo is None and isinstance(spec, (Int, Num)):
        lo, hi = spec.lo, spec.hi
    if lo is None or hi is None:
        return None
    if isinstance(lo, int) and isinstance(hi, int):
        return t("links.takes_whole", lo=lo, hi=hi)
    return t("links.takes_number", lo=f"{lo:g}", hi=f"{hi:g}")


def url_default(param: str, default, cast=str, *, key=None, choices=None, lo=None, hi=None):
    """The value of ``param`` in the URL, or ``default`` when absent or unusable.

    ``cast`` parses the text; ``choices`` lists the allowed values; ``lo``/``hi`` bound a
    number (or every number of a list). With ``key``, the URL is read only while that
    widget does not exist yet: a link seeds a widget, and from then on the widget leads.
    """
    spec = _spec(param)
    raw = st.query_params.get(param)
    if raw is None or (key is not None and key in st.session_state):
        return default
    try:
        if len(raw) > MAX_CHARS:
            raise ValueError("too long")
        if spec is not None:
            spec.parse(raw)
        value = cast(raw)
        numbers = value if isinstance(value, list) else [value]
        if any(v != v for v in numbers):  # NaN from float("nan")
            raise ValueError("not a number")
        if choices is not None and any(v not in choices for v in numbers):
            raise ValueError("not a known choice")
        if any((lo is not None and v < lo) or (hi is not None and v > hi) for v in numbers):
            raise ValueError("out of range")
    except (TypeError, ValueError):
        _ignore(param, raw, _wanted(spec, choices, lo, hi))
        return default
    return value


def url_index(param: str, ids, default: int = 0, *, key=None) -> int:
    """The position in ``ids`` of the URL's value (for ``index=``), else ``default``."""
    ids = [str(i) for i in ids]
    if not ids:
        return default
    chosen = url_default(param, ids[min(default, len(ids) - 1)], key=key, choices=ids)
    return ids.index(chosen)


# Where each choice widget takes its first value, and in what form.
_FIRST = {
    "selectbox": "index",
    "radio": "index",
    "segmented_control": "default",
    "pills": "default",
    "select_slider": "value",
}


def url_choice(
    widget, param: str, label: str, options, *, key: str, ids=None, default=0, resets=(), **kw
):
    """A choice widget whose value lives in ``?param=`` (as its id), seeded and written back.

    ``widget`` is ``st.selectbox``, ``st.radio``, ``st.segmented_control`` or
    ``st.select_slider`` (or a column's); ``ids`` name the options in the URL (the options
    themselves by default), so labels can be translated without breaking links. ``resets``
    names parameters that belonged to the previous choice (a model of another task) and are
    dropped when the choice changes; ``"*"`` drops every other parameter of the page.
    """
    options = list(options)
    ids = [str(i) for i in (options if ids is None else ids)]
    _offers(param, ids)
    index = url_index(param, ids, default, key=key)
    first = _FIRST[widget.__name__]
    if first == "default":  # a segmented control or pills: one choice always shown
        kw.setdefault("required", True)
        # Its own value as its default on every later run. Falling back to the first option
        # once the URL was read, the default changed under it, and Chromium's control takes
        # a changed default: the lit Check clicked again soon after a link opened Chat ›
        # Does it matter? › Patch lit "Generation timeline" and "Logit lens" above the
        # Patch figure the page went on drawing (5 times in 6).
        current = st.session_state.get(key)
        index = options.index(current) if current in options else index
    chosen = widget(
        label, options, **{first: index if first == "index" else options[index]}, key=key, **kw
    )
    chosen_id = ids[options.index(chosen)]
    if resets and st.query_params.get(param, ids[default]) != chosen_id:
        if resets == "*":
            resets = [k for k in st.query_params if k not in (param, *GLOBAL)]
        url_sync(**dict.fromkeys(resets))
    url_sync(**{param: chosen_id})
    return chosen


def _offers(param: str, ids: list[str]) -> None:
    """Raise Undeclared when a choice widget offers a value its page's table refuses."""
    spec = _spec(param)
    for value in ids if spec is not None else ():
        try:
            spec.parse(value)
        except ValueError as exc:
            raise Undeclared(f"?{param}={value} is offered but declared as {exc}") from None


def url_number(widget, param: str, label: str, lo, hi, default, *, key: str, cast=int, **kw):
    """A slider or number input whose value lives in ``?param=``, within ``lo``–``hi``."""
    spec = _spec(param)
    if spec is not None and not spec.covers(lo, hi):
        raise Undeclared(f"?{param}= offers {lo}–{hi}, wider than its declaration {spec}")
    first = url_default(param, default, cast, key=key, lo=lo, hi=hi)
    value = widget(label, lo, hi, first, key=key, **kw)
    url_sync(**{param: value})
    return value


def url_multiselect(param: str, label: str, options, default, *, key: str, cast=names, **kw):
    """A multiselect whose choice lives in ``?param=`` (ids separated by commas; none
    chosen: the parameter goes, and the link opens on ``default``)."""
    options = list(options)
    _offers(param, [",".join(map(str, options))] if options else [])
    linked = url_default(param, list(default), cast, key=key, choices=options)
    if len(linked) > (kw.get("max_selections") or len(linked)):  # more than it may hold
        _ignore(param)
        linked = list(default)
    picked = st.multiselect(label, options, linked, key=key, **kw)
    url_sync(**{param: picked or None})
    return picked


def url_sync(**values) -> None:
    """Write the current widget values to the URL; ``None`` removes a parameter.

    A value longer than ``MAX_CHARS`` (a pasted story) is left out rather than cut: the
    link then opens the default instead of a truncated input. Only changed values are
    written: each write is a message to the browser.
    """
    for key, value in values.items():
        if value is not None:  # a removal may name a stale link's parameter
            _spec(key)
        if isinstance(value, bool):
            text = "1" if value else "0"
        elif isinstance(value, list | tuple):
            text = ",".join(map(str, value))
        else:
            text = str(value)
        if value is None or len(text) > MAX_CHARS:
            if key in st.query_params:
                del st.query_params[key]
            continue
        if st.query_params.get(key) != text:
            st.query_params[key] = text


def public_origin() -> str:
    """``ATTENTION_STUDIO_PUBLIC_URL`` (scheme://host[:port]), or "" when unset."""
    return os.environ.get("ATTENTION_STUDIO_PUBLIC_URL", "").strip().rstrip("/")


def _base() -> str:
    """The page's address as the class reaches it: ``ATTENTION_STUDIO_PUBLIC_URL`` when the
    operator sets one (a name the students use that the server cannot see, e.g. behind a
    NAT), else the browser's own address, else the request's Host header, never a guess
    such as localhost."""
    url = st.context.url or ""
    public = public_origin()
    if public:
        return public + urlsplit(url).path if url else public
    if url:
        return url
    host = st.context.headers.get("Host") if st.context.headers else None
    return f"http://{host}/" if host else ""


def current_link() -> str:
    """This view's link as the server knows it (the browser's copy is the live one)."""
    base = _base()
    query = urlencode(st.query_params.to_dict())
    return f"{base}?{query}" if query else base


# The copy works without a network and without a secure context (a school server on plain
# http has no navigator.clipboard): it selects the text and falls back to execCommand. It
# reads the browser's own address, which follows every widget, fragments included.
_LINK_HTML = """
<div class="kit-link" style="display:flex;gap:.5rem;align-items:center">
<input id="kit-link-text" readonly value="{link}" aria-label="{label}"
 style="flex:1;font-family:monospace;font-size:.85rem;padding:.3rem;min-width:0">
<button id="kit-link-copy" type="button" data-done="{done}" data-public="{public}"
 style="padding:.3rem .8rem">{label}</button>
</div>
<script>
(() => {{
  if (window.__kitLinkBound) return;
  window.__kitLinkBound = true;
  document.addEventListener("click", async (event) => {{
    const button = event.target.closest && event.target.closest("#kit-link-copy");
    if (!button) return;
    const box = document.getElementById("kit-link-text");
    const origin = button.dataset.public || window.location.origin;
    box.value = origin + window.location.pathname + window.location.search + window.location.hash;
    box.select();
    try {{ await navigator.clipboard.writeText(box.value); }}
    catch (e) {{ document.execCommand("copy"); }}
    button.textContent = button.dataset.done;
  }});
}})();
</script>
"""


def link_box() -> None:
    """ "Copy link to this view": the page's address with every widget in it."""
    with st.container(key="kit-link"):
        label = t("links.copy")
        st.html(
            _LINK_HTML.format(
                link=html.escape(current_link(), quote=True),
                label=html.escape(label),
                done=html.escape(t("links.copied"), quote=True),
                public=html.escape(public_origin(), quote=True),
            ),
            unsafe_allow_javascript=True,
        )


def url_text(box, label: str, default: str, *, key: str, param: str = "text", **gate):
    """A text box kept in ``?text=`` and passed through :func:`kit.textbox.gated_text`
    (``gate``: ``limits``, ``unit``, ``ends``); None, and left out of the link, when the
    text is over its limits."""
    text = gated_text(box, label, url_default(param, default, key=key), key=key, **gate)
    url_sync(**{param: text})
    return text


def example_and_text(
    examples, key: str, example_label: str, text_label: str, box=None, **gate
) -> str | None:
    """An example picker and a text box that starts from it, both kept in the URL.

    ``box`` is ``st.text_input`` (default) or ``st.text_area``. ``?example=`` is the
    example's position and ``?text=`` the text typed: a link opens
    with the text it was copied with; picking another example starts from that example.
    ``gate`` (``limits``, ``unit``, ``ends``) counts the text under the box and refuses it
    over its limits (:func:`kit.textbox.gated_text`): None then, and nothing runs on it.
    """
    examples = list(examples)
    index = url_index("example", range(len(examples)), key=f"example-{key}")
    choice = st.selectbox(example_label, examples, index, key=f"example-{key}")
    index = examples.index(choice)
    if st.query_params.get("example", str(index)) != str(index):  # a new example
        url_sync(text=None)
    text_key = f"text-{key}-{index}"
    box = box or st.text_input
    value = url_default("text", choice, key=text_key)
    if gate:
        text = gated_text(box, text_label, value, key=text_key, **gate)
    else:
        text = box(text_label, value, key=text_key)
    url_sync(example=index, text=text)
    return text
