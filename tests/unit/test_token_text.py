"""Labels for byte-level BPE tokens (engine.models.token_text), without a model."""

from engine.models import token_text

NAME = {b: c for c, b in token_text.BYTE_OF.items()}  # a byte → its character in a name


def name(data: bytes) -> str:
    return "".join(NAME[b] for b in data)


def labels(pieces: list[bytes], special=()) -> list[str]:
    """Label tokens holding ``pieces`` as a tokenizer would decode each alone."""

    def text_of(k):
        return pieces[k].decode("utf-8", errors="replace")

    names = [p.decode() if k in special else name(p) for k, p in enumerate(pieces)]
    return token_text.readable(names, text_of, [k in special for k in range(len(pieces))])


def test_the_table_is_gpt2s():
    assert len(token_text.BYTE_OF) == 256 and set(token_text.BYTE_OF.values()) == set(range(256))
    assert NAME[ord(" ")] == "Ġ" and NAME[ord("\n")] == "Ċ" and NAME[ord("a")] == "a"
    assert token_text.token_bytes("Ġthe") == b" the"


def test_a_character_split_over_tokens_is_labelled_by_the_character():
    zhu, yi = "注".encode(), "意".encode()  # e6 b3 a8, e6 84 8f
    got = labels([zhu[:2], zhu[2:], yi[:1], yi[1:2], yi[2:], b" ok"])
    assert got == ["注 1/2", "注 2/2", "意 1/3", "意 2/3", "意 3/3", " ok"]


def test_a_token_ending_one_character_and_starting_the_next():
    li, yi = "力".encode(), "意".encode()
    got = labels([li[:2], li[2:] + yi[:1], yi[1:]])
    assert got == ["力意 1/3", "力意 2/3", "力意 3/3"]


def test_a_run_that_never_completes_shows_its_bytes():
    smile = "🙂".encode()  # f0 9f 99 82
    assert labels([b"Hi", smile[:2], smile[2:3]]) == ["Hi", "<f0 9f>", "<99>"]
    assert labels([smile[:2], b" then"]) == ["<f0 9f>", " then"]  # broken by text
    assert labels([smile[:2], b"<|im_end|>"], special={1}) == ["<f0 9f>", "<|im_end|>"]


def test_whole_tokens_keep_the_tokenizers_text():
    assert labels([b"The", b" caf", "é".encode()]) == ["The", " caf", "é"]


def test_a_generation_cut_off_inside_a_character_is_told_apart():
    zhu = "注".encode()
    assert token_text.ends_mid_character([name(b"Hi"), name(zhu[:2])])
    assert not token_text.ends_mid_character([name(zhu[:2]), name(zhu[2:])])
    assert not token_text.ends_mid_character([name(zhu[:2]), "<|im_end|>"])  # broken off
    assert not token_text.ends_mid_character([])
