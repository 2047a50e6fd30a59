"""One benchmark goal, ``value op target``, as every bench/results JSON writes it (no heavy imports: GPU machines
run bench scripts without the search stack)."""

from __future__ import annotations


def goal(value: float, target: float, op: str) -> dict[str, object]:
    """``{"value", "target", "op", "met"}`` with ``op`` one of ">=", "<=", ">"."""
    met = {">=": value >= target, "<=": value <= target, ">": value > target}[op]
    return {"value": value, "target": target, "op": op, "met": bool(met)}
