"""Loaders: files in, typed records out. One module per format; no database access here."""
