"""The values card, "What the tensors hold": real values of one forward pass at init, `model.values` (view.py)."""
