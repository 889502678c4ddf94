from engine.data.vocab import BOS_ID, EOS_ID, PAD_ID, UNK_ID, Vocab


def test_specials_have_fixed_ids():
    v = Vocab.build([["b", "a", "a"]])
    assert (PAD_ID, BOS_ID, EOS_ID, UNK_ID) == (0, 1, 2, 3)
    assert v.itos[:4] == ["<pad>", "<s>", "</s>", "<unk>"]
    assert v.itos[4:] == ["a", "b"]  # by falling count, then name
    assert len(v) == 6


def test_encode_decode_round_trip_and_unknowns():
    v = Vocab.build([["le", "chat"], ["le", "chien"]])
    ids = v.encode(["le", "chat"], add_bos=True, add_eos=True)
    assert ids[0] == BOS_ID and ids[-1] == EOS_ID
    assert v.decode(ids) == ["le", "chat"]
    assert v.decode(v.encode(["le"]) + [EOS_ID] + v.encode(["chat"])) == ["le"]  # stops at </s>
    assert v.encode(["zèbre"]) == [UNK_ID]
    assert v.unknown(["le", "zèbre", "gnou", "zèbre"]) == ["zèbre", "gnou"]


def test_min_count_and_json_round_trip():
    v = Vocab.build([["a", "a", "b"]], min_count=2)
    assert "b" not in v and "a" in v
    w = Vocab.from_json(v.to_json())
    assert w.itos == v.itos and w.stoi == v.stoi
