"""The visual review (bench/screens.py) on every section of the Variants lab: the figure on
the presenter's first screen, labels apart, no near-uniform map, nothing cut, nothing
left in English in 中文, every URL widget showing its ``?param=``; and the widget check's
pairing on this page, which names two number inputs from one reused ``label`` variable
(layer, then head), shown able to fail.
"""

import pytest

from bench import screens
from tests.e2e.support import assert_no_exception

pytestmark = pytest.mark.e2e

_, SECTIONS = screens.sections("variants")


def _number(label: str, shown: int) -> dict:
    return {"kind": "numberinput", "label": label, "shown": str(shown), "index": None}


def test_the_layer_and_head_inputs_are_paired_with_their_own_parameters():
    """Quality's maps: ``label = t("variants.layer")`` for ?layer=, then the same name for
    ?head=. Each input is checked against its own parameter, and a wrong one is found."""
    t = screens.catalog("en")
    layer, head = t["variants.layer"].format(last=1), t["variants.head"].format(last=1)
    url = "http://x/variants?section=quality&layer=1&head=0&seed=0"
    asked = {"section": "quality"}
    agree = [_number(layer, 1), _number(head, 0), _number(t["variants.seed_trained"], 0)]
    assert screens.widget_disagreements("variants", agree, url, asked, "en") == []
    wrong = [_number(layer, 0), _number(head, 0), _number(t["variants.seed_trained"], 0)]
    (bad,) = screens.widget_disagreements("variants", wrong, url, asked, "en")  # once
    assert (bad["param"], bad["label"], bad["why"]) == ("layer", layer, "number differs")
    # Compare's MiniLM input: ?layer=2 is MiniLM's layer, not the one-head map's "head".
    minilm = t["variants.layer"].format(last=5)
    shown = [_number(minilm, 2), _number(t["variants.head"].format(last=0), 0)]
    url = "http://x/variants?section=compare&layer=2&head=0"
    assert screens.widget_disagreements("variants", shown, url, {}, "en") == []
    shown[0] = _number(minilm, 3)
    (bad,) = screens.widget_disagreements("variants", shown, url, {}, "en")
    assert bad["param"] == "layer"


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("section", SECTIONS)
def test_every_section_passes_the_visual_review(studio_url, page, section, lang, tmp_path):
    view = screens.View("variants", section, (("section", section),))
    for viewport in (screens.VIEWPORTS[v] for v in screens.REVIEWED):
        result = screens.check_view(page, studio_url, view, viewport, lang, tmp_path)
        print(result.line())
        assert result.error is None, result.error
        assert_no_exception(page)
        found = {check: items for check, items in result.findings.items() if items}
        assert not found, f"{result.name}: {found}"
