"""A page that needs no server: `python -m app export lesson.html [config and training options]`.

One self-contained HTML file (BokehJS inlined, no network, works from file://) that looks and behaves like the
live explorer: the same controls and rules, the same shapes table, chart and budget lines, and the same training
card (`model.training.plan`'s lines, headline, memory chart), recomputed in the browser. In parts, one job each:

- `spec`: everything the page's JavaScript needs, taken from `model` and the live page's definitions, with every
  line's formula compiled to JavaScript;
- `page.js`: the page logic (formatters, rules, rows, markup), each function the twin of a Python one;
- `page`: the Bokeh document and the self-contained HTML;
- `cli`: the command line.
"""
from .page import PAGE_TITLE, build_document, external_references, render_html
from .spec import page_spec

__all__ = ["PAGE_TITLE", "build_document", "external_references", "page_spec", "render_html"]
