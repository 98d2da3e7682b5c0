"""hlodiff: why did my XLA program compile again?

Layers, each importing only the ones before it:
``hlo`` (model, parser, printer) -> ``dumps`` (where modules come from) -> ``graph`` (canonical graphs,
normalization, fingerprints) -> ``diff`` (matching, causes) -> ``explain`` (runs) -> ``render`` (terminal, JSON, HTML).
"""

__version__ = "0.1.0"
