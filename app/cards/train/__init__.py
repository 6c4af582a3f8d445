"""The training card, "From N to a training run": view.py; markup.py (pure); settings.py, its keys in the URL."""
