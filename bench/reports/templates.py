"""Document templates (bench/*.md.in): ``{{name:path|format}}`` placeholders filled from the results."""

from __future__ import annotations

import re
from pathlib import Path

from bench.reports import load, scale
from bench.reports.readers import goals_of, read_json
from bench.reports.scale import (
    dense_table,
    ingest_lines,
    milvus_lines,
    milvus_server_lines,
    milvus_synthetic_lines,
    per_million_table,
    product_lines,
    sizing_table,
)
from bench.reports.text import goals_line

PLACEHOLDER = re.compile(r"\{\{([a-z_0-9]+)(?::([A-Za-z0-9_.@-]+))?(?:\|([a-z0-9]+))?\}\}")


def _lookup(data: dict, path: str, where: str):
    value = data
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            raise SystemExit(f"{where}: {path} is not in the JSON")
        value = value[part]
    return value


def _format(value, fmt: str | None) -> str:
    if fmt in (None, "s"):
        return str(value)
    if fmt == "date":
        return str(value)[:10]
    if fmt == "int":
        return f"{int(value):,}"
    if fmt in ("f0", "f1", "f2", "f3", "f4"):
        return f"{float(value):,.{fmt[1]}f}"
    if fmt == "mb":
        return f"{value / 2**20:.1f}"
    if fmt == "kb":
        return f"{value / 1024:.0f}"
    if fmt in ("range0", "range2"):
        digits = int(fmt[-1])
        return f"{min(value):.{digits}f}–{max(value):.{digits}f}"
    raise SystemExit(f"unknown format '{fmt}'")


TABLES = {"per_million_table": per_million_table, "sizing_table": sizing_table, "dense_table": dense_table,
          "milvus_table": lambda d: "\n".join(milvus_lines(d)).strip(),
          "milvus_synthetic_table": lambda d: "\n".join(milvus_synthetic_lines(d)).strip(),
          "milvus_server_table": lambda d: "\n".join(milvus_server_lines(d)).strip(),
          "product_table": lambda d: "\n".join(product_lines(d)).strip(),
          "product_store_table": lambda d: "\n".join(product_lines(d, store=True)).strip() or "(not run yet.)",
          "ingest_line": lambda d: "\n".join(ingest_lines(d)).strip()}


def render_reliability(results: Path, template: Path) -> str:
    """The reliability document: the template's prose with its placeholders filled from the JSONs."""
    return render_template(results, template, ("load", "backup", "app"))


def render_template(results: Path, template: Path, names: tuple[str, ...]) -> str:
    """A document template's prose with its ``{{name:path|format}}`` placeholders filled from the JSONs ``names``."""
    sources = {name: read_json(results, name) for name in names}
    text = template.read_text()

    def fill(match: re.Match) -> str:
        name, path, fmt = match.groups()
        if name == "load_table":
            runs = load.read(results)
            return load.load_table(runs) if runs else "(bench/load.py has not been run.)"
        if name in TABLES:  # {{sizing_table:scale}}: a table drawn from scale.json
            figures = scale.read(results) if path == "scale" else None
            if figures is None:
                raise SystemExit(f"{template}: {{{{{name}:…}}}} needs bench/results/scale.json")
            return TABLES[name](figures)
        if name == "goals":  # {{goals:backup}}: that JSON's goals as one sentence
            goals = goals_of(sources.get(path) or {}, f"bench/results/{path}.json")
            return "\n".join(goals_line(goals)).strip() or "(no goals in this run.)"
        data = sources.get(name)
        if data is None:
            raise SystemExit(f"{template}: {{{{{name}:…}}}} needs bench/results/{name}.json")
        return _format(_lookup(data, path, f"bench/results/{name}.json"), fmt)

    return PLACEHOLDER.sub(fill, text)
