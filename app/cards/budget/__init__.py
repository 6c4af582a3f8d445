"""The budget card: N, the parameter chart and every line of `model.budget` (view.py; markup.py, pure)."""
