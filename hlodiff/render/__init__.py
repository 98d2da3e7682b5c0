"""Renderers: terminal (rich), JSON (stable, documented in the README) and HTML (self-contained)."""
