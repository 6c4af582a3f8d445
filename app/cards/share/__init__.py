"""The share card: the page's link and embed code (view.py), and how tall an embedded view is (heights.py)."""
