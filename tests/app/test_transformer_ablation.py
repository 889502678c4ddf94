"""AppTest for the Transformer page's "Does it matter?" section (issue 33): each head of
our Transformer and of MiniLM removed alone, the heads that matter most, MiniLM's
faithfulness meter, bad input, and 中文. The numbers shown are the engine's."""

import json
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from engine import checkpoints
from engine.analysis import ablation_encoder, ablation_transformer
from engine.analysis import faithfulness_tokens as FT
from engine.models import pretrained, registry, transformer
from tests.app.plotly_support import shown_numbers, z_values
from tests.app.test_locales import english, interface_strings

PAGE = Path(__file__).resolve().parents[2] / "app" / "studios" / "transformer.py"
DATES = "transformer-dates-sinusoidal"
TEXT = "The cat sat on the mat."


def open_section(**params) -> AppTest:
    at = AppTest.from_file(str(PAGE), default_timeout=300)
    at.query_params.update(section="causal", **params)
    return at.run()


def figure(at, words: str) -> dict:
    for c in at.get("plotly_chart"):
        spec = json.loads(c.proto.spec)
        if words in spec["layout"]["title"]["text"].replace("<br>", " "):
            return spec
    raise AssertionError(f"no figure titled with {words!r}")


def heat(spec) -> np.ndarray:
    h = spec["data"][0]
    return z_values(h["z"]).reshape(len(h["y"]), len(h["x"]))


def table_with(at, column: str):
    return next(d.value for d in at.dataframe if column in d.value.columns)


def shown(at) -> str:
    return "\n".join(str(p.value) for p in [*at.markdown, *at.info, *at.caption])


@pytest.fixture(scope="module")
def dates():
    if DATES not in checkpoints.available("transformer-dates"):
        pytest.skip(f"checkpoint {DATES} not trained yet")
    return transformer.load(DATES)


@pytest.fixture(scope="module")
def minilm():
    if not pretrained.minilm_path().exists():
        pytest.skip("MiniLM is not installed: run bash scripts/setup.sh")
    return registry.get(registry.MINILM).load()


@pytest.fixture(scope="module")
def ours_view(dates):
    at = open_section(model=DATES)
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_our_heads_removed_alone_are_the_engines_numbers(dates, ours_view):
    at = ours_view
    text = next(t for t in at.text_input if t.label == "Input").value
    L, H = dates.cfg.n_layers, dates.cfg.n_heads
    for mode in ("zero", "mean"):
        at.radio(key="tr-mode").set_value(mode).run()
        assert not at.exception, [e.value for e in at.exception]
        want = ablation_transformer.ablate(dates, text, mode=mode)
        kind = "encoder_self"  # the page's first map
        spec = figure(at, "Removing each head of the encoder self-attention")
        z = heat(spec)
        assert z.shape == (L, H) and spec["data"][0]["zmin"] == -spec["data"][0]["zmax"]
        np.testing.assert_allclose(z, want.delta_log_prob[kind].numpy(), atol=1e-3)
        assert f"({mode}" in spec["layout"]["title"]["text"]
        table = table_with(at, "Head")
        worst = int(np.argmin(want.delta_log_prob[kind].numpy()))
        layer, head = divmod(worst, H)
        assert table["Head"].iloc[0] == f"L{layer} H{head}"
        assert shown_numbers(table["Δ log p (translation)"])[0] == pytest.approx(
            float(want.delta_log_prob[kind][layer, head]), abs=1e-3
        )
        again = want.ablated_translations[kind][layer][head]
        assert table["translation without the head"].iloc[0] == again
        assert (table["translation changes"].iloc[0] == "yes") == (again != want.translation)
        figure(at, f"What L{layer} H{head} attends to")  # beside its pattern
        changed = int(want.changed[kind].sum())
        assert f"{changed} of the {L * H} heads" in shown(at)
        # The scale is the effects' own only past ±0.1 nats; under that, pale, and said.
        largest = float(np.abs(want.delta_log_prob[kind].numpy()).max())
        assert spec["data"][0]["zmax"] == pytest.approx(max(largest, 0.1), abs=1e-6)
        assert ("No head matters much alone" in shown(at)) is (largest < 0.1)


def test_the_section_follows_the_chosen_map(dates, ours_view):
    at = ours_view
    at.selectbox(key="attention").set_value("cross").run()
    assert not at.exception
    z = heat(figure(at, "Removing each head of the cross-attention"))
    assert z.shape == (dates.cfg.n_layers, dates.cfg.n_heads)


def test_minilm_heads_and_the_faithfulness_meter(minilm):
    at = open_section(family="pretrained", text=TEXT)
    assert not at.exception, [e.value for e in at.exception]
    want = ablation_encoder.ablate(minilm, TEXT)
    spec = figure(at, "how far the sentence embedding moves")
    z = heat(spec)
    assert z.shape == (6, 12) and spec["data"][0]["zmin"] == 0
    np.testing.assert_allclose(z, want.shift.numpy(), atol=1e-3)
    meter = FT.for_encoder(minilm, TEXT, 1)  # the page's default: the first word
    at.select_slider(key="layer-6").set_value(5).run()  # the layer shared with the grid
    assert not at.exception
    spec = figure(at, "Which input tokens matter for “the”")
    rows = heat(spec)
    assert rows.shape == (len(meter.tokens), 5) and spec["data"][0]["zmin"] == -1
    np.testing.assert_allclose(rows[:, 2], meter.scaled(5)["occlusion"], atol=1e-3)
    agreement, numbers = table_with(at, "Spearman ρ"), table_with(at, "occlusion Δ")
    assert len(agreement) == 6  # 2 readings × 3 attributions
    rho = agreement["Spearman ρ"].iloc[0]
    assert rho == pytest.approx(meter.agreement(5)["attention", "occlusion"].spearman, abs=1e-3)
    np.testing.assert_allclose(
        shown_numbers(numbers["occlusion Δ"]), meter.occlusion, atol=1e-3, rtol=1e-4
    )
    verdict = meter.verdict(5)["attention"]
    assert f"layer 5 **{verdict.replace('partly', 'partly agrees')}**" in shown(at)


def test_bad_input_gets_a_message(minilm):
    at = open_section(family="pretrained", text=" ".join(["word"] * 70))
    assert not at.exception, [e.value for e in at.exception]
    assert "reads at most 64 tokens; this input has 72" in shown(at)
    figure(at, "how far the sentence embedding moves")  # the ablation still drew
    at = open_section(family="pretrained", text=TEXT)
    next(t for t in at.text_input if t.label == "Input").set_value("   ").run()
    assert not at.exception and "Type a sentence" in shown(at)


@pytest.mark.parametrize("family", ["ours", "pretrained"])
def test_the_section_in_chinese(family, dates, minilm):
    at = open_section(family=family, lang="zh", text=TEXT)
    assert not at.exception, [e.value for e in at.exception]
    seen = interface_strings(at)
    seen += [("caption", c.value) for c in at.caption] + [
        ("markdown", m.value) for m in at.markdown
    ]
    for c in at.get("plotly_chart"):
        spec = json.loads(c.proto.spec)
        title = spec["layout"]["title"]["text"]
        seen += [("figure", title)]
        if "哪些输入词元" in title:  # the meter's columns name its readings
            seen += [("column", str(x)) for x in spec["data"][0]["x"]]
    for table in at.dataframe:
        if "pe" not in table.value.columns:  # the measured table: kit.tables translates it
            seen += [("column", str(c)) for c in table.value.columns]
    left = sorted({(kind, text) for kind, text in seen if english(text)})
    assert not left, left
    assert any("积分梯度" in text for _, text in seen) == (family == "pretrained")
