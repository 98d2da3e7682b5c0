"""Canonical graphs, normalization passes and fingerprints. Depends on :mod:`hlodiff.hlo` only."""

from hlodiff.graph.canonical import CanonicalComputation, CanonicalModule, Normalization, PassReport
from hlodiff.graph.fingerprint import canonicalize, fingerprint, normalized_text

__all__ = ["CanonicalComputation", "CanonicalModule", "Normalization", "PassReport", "canonicalize",
           "fingerprint", "normalized_text"]
