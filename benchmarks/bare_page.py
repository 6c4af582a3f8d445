"""The floor for the latency benchmarks: a bare Panel page, one IntSlider and one HTML pane bound to it.

Served beside the explorer by `benchmarks/bench_app_latency.py` and `benchmarks/bench_load.py` (same server
process, same browser), so the explorer's figures are read as ratios to what Panel itself costs: the server's
CPU and memory to open a page, its Bokeh models (10), a slider → text round trip and its CPU per key press.
"""
from __future__ import annotations

import panel as pn


def bare_text(T: int) -> str:
    return f"<p class='bare'>T = {T}</p>"


if pn.state.served:
    slider = pn.widgets.IntSlider(name="T", start=1, end=2048, value=1024, css_classes=["slider-T"])
    pn.Column(slider, pn.pane.HTML(pn.bind(bare_text, slider))).servable(title="bare")
