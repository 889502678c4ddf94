"""Token labels a reader can read, for byte-level BPE (GPT-2's scheme; SmolLM2 uses it).

Byte-level BPE splits a character of two to four UTF-8 bytes (every Chinese character,
"é", an emoji) across tokens, and no such token is text on its own: it decodes to U+FFFD,
and its byte-level name ("æ³", "¨") is mojibake. A run of such tokens is labelled here by
the text it completes, each token with its place in the run: 注 (U+6CE8, bytes e6 b3 a8)
is the two tokens "æ³" + "¨", labelled "注 1/2" and "注 2/2". A run that never completes (a
generation stopped mid-character, a next-token candidate read alone) shows its bytes,
"<e6 b3>", the way byte-fallback vocabularies name them (Llama's "<0xE6>").
"""

from __future__ import annotations

import codecs
from collections.abc import Callable, Iterable


def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2's table (openai/gpt-2 src/encoder.py, ``bytes_to_unicode``): each byte as a
    printable character, so that a token's name is text. Printable Latin-1 bytes stand for
    themselves; the others map to U+0100 onwards in byte order."""
    kept = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1)]
    kept += range(ord("®"), ord("ÿ") + 1)
    table, extra = {}, 0
    for b in range(256):
        if b in kept:
            table[b] = chr(b)
        else:
            table[b] = chr(256 + extra)
            extra += 1
    return table


BYTE_OF = {c: b for b, c in _bytes_to_unicode().items()}  # a name's character → its byte


def token_bytes(name: str) -> bytes | None:
    """The bytes a byte-level token name stands for; None for a name outside the table."""
    try:
        return bytes(BYTE_OF[c] for c in name)
    except KeyError:
        return None


def _shown_bytes(data: bytes) -> str:
    return "<" + " ".join(f"{b:02x}" for b in data) + ">"


def readable(
    names: Iterable[str], text_of: Callable[[int], str], special: Iterable[bool]
) -> list[str]:
    """A label per token: ``text_of(k)`` (the tokenizer's decoding of token k) where that is
    text, the completed text with "j/n" for a run of partial tokens, or its bytes."""
    out: list[str] = []
    run: list[bytes] = []  # the partial tokens waiting for their character's last byte

    def flush() -> None:
        out.extend(_shown_bytes(data) for data in run)
        run.clear()

    for k, (name, is_special) in enumerate(zip(names, special, strict=True)):
        if is_special:
            flush()
            out.append(name)
            continue
        text = text_of(k)
        data = token_bytes(name) if "\ufffd" in text or run else None
        if data is None:  # text on its own (or a name outside the table: shown as it is)
            flush()
            out.append(text if "\ufffd" not in text else name)
            continue
        try:
            whole = b"".join([*run, data]).decode("utf-8")
        except UnicodeDecodeError as exc:
            if exc.reason != "unexpected end of data":  # this token cannot continue the run
                flush()
                if "\ufffd" not in text:
                    out.append(text)
                    continue
            run.append(data)
            continue
        run.append(data)
        n = len(run)
        out.extend(whole if n == 1 else f"{whole} {j}/{n}" for j in range(1, n + 1))
        run.clear()
    flush()
    return out


def ends_mid_character(names: Iterable[str]) -> bool:
    """True when the tokens' bytes stop inside a character (a generation cut off by its
    token limit): the decoded text then ends in U+FFFD for a character never written."""
    utf8 = codecs.getincrementaldecoder("utf-8")(errors="replace")
    for name in names:
        data = token_bytes(name)
        if data is None:  # a name outside the table ends any run (an ASCII name breaks it)
            utf8.reset()
        else:
            utf8.decode(data)
    return bool(utf8.getstate()[0])


def byte_level(tokenizer) -> bool:
    """True for byte-level BPE (GPT-2, RoBERTa, Llama 3, SmolLM2): names spell bytes."""
    if hasattr(tokenizer, "byte_encoder"):  # transformers' slow GPT2Tokenizer
        return True
    decoder = getattr(getattr(tokenizer, "backend_tokenizer", None), "decoder", None)
    return type(decoder).__name__ == "ByteLevel"


def labels(tokenizer, ids: Iterable[int], special_ids: Iterable[int] | None = None) -> list[str]:
    """A label per token id of a HuggingFace tokenizer: byte-level names made readable
    (" the" for "Ġthe", "注 1/2" for "æ³"); WordPiece's "##ing" and SentencePiece's "▁the"
    stay as they are, the marks their readers know. ``special_ids``: the tokens shown by
    name (the tokenizer's own special tokens by default)."""
    ids = [int(i) for i in ids]
    names = tokenizer.convert_ids_to_tokens(ids)
    if not byte_level(tokenizer):
        return names
    special = set(tokenizer.all_special_ids if special_ids is None else special_ids)
    return readable(names, lambda k: tokenizer.decode([ids[k]]), [i in special for i in ids])
