"""Cached loaders around the engine's registries, one module per model family.

Never imports views: state hands Traces to pages, pages hand them to views.
"""
