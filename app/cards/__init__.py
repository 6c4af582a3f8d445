"""The page's cards, one folder each: its Panel view (`view.py`), its pure markup (`markup.py`: no Panel, so the
exported page runs it compiled, app/export/compiled.py) and its settings in the URL (`settings.py`) where it has
them. The packages import nothing, so `app.query` and the export reach a card's pure modules without Panel."""
