"""Put on ``PYTHONPATH`` by ``hlodiff record``: holds the ``sitecustomize`` that installs the sync hook.

(This ``__init__`` only makes packaging tools ship the folder; the folder itself, not the package, goes on the
path.)
"""
