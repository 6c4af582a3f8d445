"""The inference card, from a forward pass to serving: view.py; markup.py (pure); settings.py, its keys in the URL;
charts.py, its two Bokeh charts (Bokeh only: the exported page builds them too)."""
