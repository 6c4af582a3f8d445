"""The shapes table: one forward pass, tensor by tensor, as `model.trace` lists it (view.py; markup.py, pure)."""
