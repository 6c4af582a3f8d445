"""The controls card: one ESM component, its server side (view.py) and its browser side (esm.py)."""
