"""The web layer: a Datasette plugin (plugin.py) and the `errkb serve` command (serve.py).

Nothing here imports datasette at import time except plugin.py, which only Datasette loads.
"""
