"""The renderers of docs/BENCHMARKS.md, RELIABILITY.md and SCALING.md: one module per result file under bench/results/.

Imports only bench.reports and, for a check of the code's defaults, curation (never a benchmark module).
"""
