"""model.units: the numbers a learner reads."""
import pytest

from model import units as fmt


@pytest.mark.parametrize("n, text", [(124_439_808, "124,439,808"), (0, "0"), (999, "999"), (1_000, "1,000")])
def test_thousands(n, text):
    assert fmt.thousands(n) == text


@pytest.mark.parametrize("n, text", [
    (124_439_808, "124.4 million"), (174_604_259_328, "174.6 billion"), (768, "768"), (38_400, "38.4 k"),
    (999_960_000, "1.0 billion"),  # rounding to 1000.0 M moves up a unit
])
def test_params(n, text):
    assert fmt.params(n) == text


@pytest.mark.parametrize("n, text", [
    (248_879_616, "249 MFLOP"), (746_638_848, "747 MFLOP"), (1.0476e12, "1.05 TFLOP"), (349.2e9, "349 GFLOP"),
    (999.7e6, "1 GFLOP"), (12, "12 FLOP"),
])
def test_flops(n, text):
    assert fmt.flops(n) == text


@pytest.mark.parametrize("n, text", [
    (402_653_184, "384 MiB"), (8, "8 bytes"), (1_022, "1,022 bytes"), (1_536, "1.5 KiB"), (2**30 - 1000, "1 GiB"), (2**30 - 10**7, "1014 MiB"),
    (12 * 2**30, "12 GiB"), (1_610_612_736, "1.5 GiB"),
])
def test_nbytes(n, text):
    assert fmt.nbytes(n) == text


@pytest.mark.parametrize("x, text", [(0.1523, "15.2 %"), (0.0412, "4.1 %"), (0.99996, "99.9 %"), (1.0, "100.0 %"),
                                     (0.0004, "< 0.1 %"), (0, "0 %")])
def test_percent(x, text):
    assert fmt.percent(x) == text


def test_shape():
    assert fmt.shape((8, 12, 1024, 1024)) == "(8, 12, 1024, 1024)"
    assert fmt.shape(()) == "()"
