"""An effect map's colour scale: a sweep of negligible effects is drawn pale, not as deep as
a head the model cannot do without (views.causal.EFFECT_FLOOR)."""

import numpy as np
from views.causal import EFFECT_FLOOR, ablation_figure, negligible


def scale(delta) -> tuple[float, float]:
    found = {"delta_log_prob": np.asarray(delta), "mode": "zero", "answer": "Paris"}
    trace = ablation_figure(found, None).to_dict()["data"][0]
    # the visual review's "uniform" check reads this as a scale held on purpose
    assert ("meta" in trace) is (trace["zmax"] == EFFECT_FLOOR)
    return trace["zmin"], trace["zmax"]


def test_tiny_effects_are_pale_and_said_to_be_tiny():
    tiny = [[-0.001, 0.0002], [-0.004, -0.002]]
    assert scale(tiny) == (-EFFECT_FLOOR, EFFECT_FLOOR)  # was ±0.004: −0.004 the deepest
    assert "0.004" in negligible(tiny) and "No head matters much alone" in negligible(tiny)


def test_real_effects_keep_their_own_scale_and_no_note():
    real = [[-2.5, 0.3], [np.nan, np.nan]]  # a stopped sweep: the blank layer is NaN
    assert scale(real) == (-2.5, 2.5)
    assert negligible(real) is None
    stopped = [[-0.001, 0.002], [np.nan, np.nan]]  # tiny so far, the rest not measured
    assert scale(stopped) == (-EFFECT_FLOOR, EFFECT_FLOOR) and negligible(stopped) is None


def test_a_colour_bar_on_a_maps_own_range_names_its_ends():
    """Plotly's "nice" steps left a ±0.004 bar of 120 px one label, "0"; a 0–1 bar keeps
    Plotly's own ticks."""
    from views.heatmap import bar_ticks, heatmap

    assert bar_ticks(-0.004, 0.004, 120)["ticktext"] == ["−0.004", "0", "0.004"]
    assert bar_ticks(0.0, 0.084, 400)["ticktext"] == ["0", "0.021", "0.042", "0.063", "0.084"]
    assert bar_ticks(-1500.0, 1500.0, 200)["ticktext"][0] == "−1,500"
    assert bar_ticks(0.0, 1.0, 400) == {"nticks": 10}
    found = {"delta_log_prob": np.array([[-0.3, 0.05]]), "mode": "zero", "answer": "x"}
    bar = ablation_figure(found, None).to_dict()["data"][0]["colorbar"]
    assert bar["ticktext"][0] == "−0.3" and bar["ticktext"][-1] == "0.3"
    sequential = heatmap(np.array([[0.01, 0.084]]), ["a", "b"], ["q"]).to_dict()["data"][0]
    assert "tickvals" not in sequential["colorbar"]  # its own range: Plotly's auto, as before
