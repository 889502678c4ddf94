import numpy as np
import pytest

from engine.errors import InputError
from engine.positional import sinusoidal
from engine.walkthrough import MAX_TOKENS, WalkthroughConfig, walkthrough


def test_steps_are_consistent():
    t = walkthrough("the cat sat on the mat", WalkthroughConfig(64, 4, 2, 3))
    v = t.vectors
    d_k = t.inputs["d_k"]
    assert d_k == 16 and v["Q"].shape == (6, 16)
    assert np.allclose(v["scores"], v["Q"] @ v["K"].T, atol=1e-4)
    assert np.allclose(v["scaled"], v["scores"] / np.sqrt(d_k), atol=1e-5)
    a = t.maps["softmax"].weights[0, 0]
    assert np.allclose(a.sum(-1), 1, atol=1e-6)
    assert np.allclose(v["output"], a @ v["V"], atol=1e-5)
    assert np.allclose(t.maps["all_heads"].weights[0, 2], a, atol=1e-6)
    assert (np.triu(t.maps["causal"].weights[0, 0], 1) == 0).all()
    # Unscaled scores are sharper: lower entropy, larger max weight.
    assert t.metrics["mean_entropy_unscaled"] < t.metrics["mean_entropy"]


def test_same_word_same_embedding_and_reproducible():
    cfg = WalkthroughConfig(seed=1)
    a = walkthrough("the dog The", cfg)
    words = a.vectors["X"] - sinusoidal(3, cfg.d_model)  # X less the positions it was given
    assert np.allclose(words[0], words[2], atol=1e-5)  # "the" and "The": one vector
    assert not np.allclose(words[0], words[1], atol=1e-2)  # "dog": another
    b = walkthrough("the dog The", cfg)
    assert np.array_equal(a.vectors["X"], b.vectors["X"])  # reproducible
    other_seed = walkthrough("the dog The", WalkthroughConfig(seed=2))
    assert not np.allclose(a.vectors["X"], other_seed.vectors["X"], atol=1e-2)


@pytest.mark.parametrize("text", ["", "   \n", "word " * (MAX_TOKENS + 1)])
def test_bad_text_refused(text):
    with pytest.raises(InputError):
        walkthrough(text)


@pytest.mark.parametrize(
    "cfg", [WalkthroughConfig(d_model=30), WalkthroughConfig(n_heads=3), WalkthroughConfig(head=9)]
)
def test_bad_config_refused(cfg):
    with pytest.raises(InputError):
        walkthrough("hello world", cfg)
