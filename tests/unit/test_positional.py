import numpy as np
import pytest

from engine import positional as P
from engine.errors import InputError


@pytest.mark.parametrize("d", [2, 8, 64, 512])
@pytest.mark.parametrize("k", [-7, 0, 1, 5, 100])
def test_offset_is_a_rotation(d, k):
    assert P.verify_rotation(k, 50, d) < 1e-9
    M = P.rotation(k, d)
    assert np.allclose(M @ M.T, np.eye(d))  # orthogonal: a rotation


def test_values_match_the_formula():
    pe = P.sinusoidal(10, 16)
    pos, i = 7, 3
    assert pe[pos, 2 * i] == pytest.approx(np.sin(pos / 10000 ** (2 * i / 16)))
    assert pe[pos, 2 * i + 1] == pytest.approx(np.cos(pos / 10000 ** (2 * i / 16)))


def test_similarity_depends_only_on_distance():
    sim = P.similarity(P.sinusoidal(40, 32))
    assert np.allclose(sim[3, 10], sim[20, 27]) and np.allclose(sim, sim.T)


@pytest.mark.parametrize("d", [0, 3, 2048])
def test_bad_d_model_refused(d):
    with pytest.raises(ValueError, match="d_model"):
        P.sinusoidal(10, d)


def test_bad_length_refused():
    with pytest.raises(ValueError, match="length"):
        P.sinusoidal(100_000, 16)


def test_cosine_similarity_has_unit_diagonal_and_is_symmetric():
    import numpy as np

    sim = P.cosine_similarity(P.sinusoidal(20, 16))
    np.testing.assert_allclose(np.diag(sim), 1.0, atol=1e-12)
    np.testing.assert_allclose(sim, sim.T, atol=1e-12)
    assert sim.max() <= 1 + 1e-12


def test_encode_is_the_table_at_whole_positions_and_the_same_function_between():
    """The curves' line is drawn from ``encode`` at real positions and their dots from the
    table: they are one function, so the two cannot disagree."""
    pe = P.sinusoidal(20, 16)
    np.testing.assert_array_equal(P.encode(np.arange(20.0), 16), pe)
    np.testing.assert_array_equal(P.encode(np.arange(20.0), 16, [5, 0])[:, 0], pe[:, 5])
    x = np.array([0.5, 2.25])
    w = 1 / 10000 ** (2 * 2 / 16)  # dimension 5 is cos of frequency i = 2
    np.testing.assert_allclose(P.encode(x, 16, [5])[:, 0], np.cos(x * w))
    # a size the gate accepts (a numeral, as a link carries it) is the size, not a TypeError
    np.testing.assert_array_equal(P.encode(x, "16", [5]), P.encode(x, 16, [5]))


@pytest.mark.parametrize(
    "call",
    [
        lambda: P.encode([0.0], 16, [16]),
        lambda: P.encode([0.0], 16, [-1]),
        lambda: P.encode([0.0], 16, ["x"]),
        lambda: P.encode([0.0], 16, [1.5]),
        lambda: P.encode([np.nan], 16),
        lambda: P.encode([1e12], 16),
        lambda: P.encode([[0.0]], 16),
        lambda: P.encode([0.0], 15),
    ],
)
def test_encode_refuses_what_is_not_a_dimension_or_a_position(call):
    with pytest.raises(InputError):
        call()
