"""The renderers of docs/BENCHMARKS.md, RELIABILITY.md and SCALING.md: one module per result file under bench/results/.

Each reads its file through typed records (reports.readers, over curation.versions.typed_json); imports no benchmark.
"""
