"""Hostile input to `python -m model`: whatever the arguments, exit 0 with a report or 2 with one clear line."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from model.cli import main

FLAGS = ["--B", "--T", "--d", "--h", "--L", "--V", "--T-max", "--preset", "--dtype", "--table"]
SWITCHES = ["--untied", "--expand", "--json", "--markdown", "--csv"]
values = st.one_of(
    st.integers(-10**12, 10**12).map(str),
    st.sampled_from(["0", "-1", "1e9", "7.5", "nan", "", " ", "gpt2-small", "gpt3-175b", "bf16", "budget", "shapes",
                     "all", "12; rm -rf /", "$(id)", "../../etc/passwd", "0x10", "1_000", "٣"]),
    st.text(max_size=20),
)
argv = st.lists(st.one_of(st.tuples(st.sampled_from(FLAGS), values).map(list), st.sampled_from(SWITCHES).map(lambda s: [s])),
                max_size=6).map(lambda parts: [a for p in parts for a in p])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(args=argv)
def test_any_arguments_exit_0_or_2_with_one_line(args, capsys):
    with pytest.raises(SystemExit) as exc:
        main(args)
        raise SystemExit(0)
    out, err = capsys.readouterr()
    if exc.value.code == 0:
        assert out and err == ""
    else:
        assert exc.value.code == 2 and out == ""
        assert err.startswith("python -m model: error: ") and err.count("\n") == 1 and "Traceback" not in err
