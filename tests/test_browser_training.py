"""The training card in Chromium: the run from a link, a control that rewrites the address, no errors."""
from __future__ import annotations

import re
from dataclasses import replace

from playwright.sync_api import expect

from model import PRESETS, units
from model.train_report import human
from model.training import TrainSetup, plan
from pagetools import open_explorer, reveal

GPT3_RUN = "?preset=gpt3-175b&B=1&gpu=h100-sxm&gpus=1024&zero=3&recompute=full&D=300e9"


def test_the_training_card_shows_the_run_of_the_link_and_follows_its_controls(chromium, server):
    o = open_explorer(chromium, server, GPT3_RUN, width=1360, height=1000)
    page = o.page
    card = page.locator(".training-card")
    reveal(page, ".training-card")
    p = plan(replace(PRESETS["gpt3-175b"], B=1),
             TrainSetup(D=300 * 10**9, gpus=1024, zero=3, recompute="full"))
    lines = {x.key: x for x in p.lines}
    expect(card.locator(".train-headline")).to_contain_text(human(lines["time/gpu_hours"]))
    expect(card.locator(".train-headline")).to_contain_text("fits")
    expect(card.locator(".train-memory .part[data-row=training] .tip")).to_contain_text(
        f"weights: {units.nbytes(p.memory.weights)}")
    box = card.locator(".train-gpus input")
    box.fill("1")
    box.press("Enter")
    expect(card.locator(".train-headline")).to_contain_text("does not fit")
    expect(card).to_contain_text("ZeRO 3 shards over the n GPUs, and n = 1: each part is divided by 1, so it saves "
                                 "nothing here")  # the stage stays chosen: on one GPU it divides by 1
    expect(page).to_have_url(re.compile(r"&D=300000000000&gpus=1&zero=3&recompute=full$"))
    page.close()
    assert o.errors == []
