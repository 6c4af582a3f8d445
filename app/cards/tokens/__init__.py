"""The tokens strip: the text split into GPT-2 tokens and bytes per token (view.py)."""
