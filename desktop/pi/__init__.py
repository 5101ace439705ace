"""Provider layer: neutral transcript, catalogs, routes and per-API request projection.

Kept free of Qt, files and permissions so that a projection is a pure function of
(transcript, route, catalog, options) and the preview can show the dispatch's bytes.
"""
