"""The modern recipe's fold: a config.json and the "what each change buys" card (view.py; markup.py, pure)."""
