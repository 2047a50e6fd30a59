"""The benchmarks: one module per benchmark (``python -m bench.NAME``), each writing bench/results/NAME.json.

Imports curation/ and index/ (never the other way round); docs/*.md are rendered from the results by bench.report.
"""
