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
