"""Typed readers of the result files: frozen dataclasses decoded strictly, as the manifests are.

Each renderer module declares the records of its result file; :func:`read_result` decodes the file
through :func:`curation.versions.typed_json.decode` (every declared key present unless optional, no
undeclared key, every value of its annotated type), so a renamed or missing figure fails with the file
and the field named instead of rendering a wrong document. A key at a cutoff (``ndcg@10``) is no field
name: where it names a figure it is respelled (:func:`at_cutoffs`), where it names one of many metrics the
object is read as a mapping (:func:`gather_metrics`). A number a renderer prints as written (``12`` or
``12.5``) is read as ``object``: decoding it as a float would print ``12.0``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from curation.versions.typed_json import OPTIONAL, decode, load_json

T = TypeVar("T")


class ResultError(ValueError):
    """A result file that does not match its reader (the message names the file and the field)."""


def read_result(results: Path, name: str, cls: type[T], prepare: Callable[[object], object] | None = None) -> T | None:
    """``results/<name>.json`` decoded as ``cls``; None when that benchmark has not been run.

    ``prepare`` reshapes the parsed JSON first where its keys cannot be field names (:func:`at_cutoffs`).

    Raises:
        ResultError: the file is not JSON or does not match ``cls``.
    """
    path = results / f"{name}.json"
    if not path.exists():
        return None
    data = load_json(path, ResultError, "benchmark result")
    return decode_result(cls, prepare(data) if prepare else data, str(path))


def reader(name: str, cls: type[T], prepare: Callable[[object], object] | None = None) -> Callable[[Path], T | None]:
    """A result module's ``read(results)``: ``results/<name>.json`` as ``cls`` (:func:`read_result`), None when that
    benchmark has not been run."""
    return lambda results: read_result(results, name, cls, prepare)


def at_cutoffs(data: object) -> object:
    """A raw JSON object with its keys at a cutoff spelled as field names (``ndcg@10`` → ``ndcg_at_10``)."""
    if not isinstance(data, dict):
        return data
    return {key.replace("@", "_at_"): value for key, value in data.items()}


def decode_result(cls: type[T], data: object, where: str) -> T:
    """``data`` (parsed JSON) decoded as ``cls``, ``where`` naming it in errors."""
    return decode(cls, data, where, ResultError)


@dataclass(frozen=True)
class Goal:
    """One goal a benchmark computed from its run: ``value op target`` and whether it was met."""

    value: object  # printed as written: an int, a float or null
    target: object
    op: str
    met: bool
    of: str | None = field(default=None, metadata=OPTIONAL)


Goals = Mapping[str, Goal]


@dataclass(frozen=True)
class Interval:
    """A mean over queries with its 95% bootstrap interval."""

    mean: float
    ci95: tuple[float, float]
    n: int


@dataclass(frozen=True)
class Comparison:
    """A paired test of two systems over the same queries (Holm-adjusted p)."""

    mean_a: float
    mean_b: float
    difference: float
    p_value: float
    n: int
    test: str
    p_holm: float


@dataclass(frozen=True)
class MetricFigures:
    """One metric of one relation kind: every system's interval and the tests against ``baseline``."""

    baseline: str
    systems: Mapping[str, Interval]
    comparisons: Mapping[str, Comparison]


@dataclass(frozen=True)
class KindFigures:
    """One relation kind of one query form: its query count and each metric (``ndcg@10``, ...)."""

    queries: int
    metrics: Mapping[str, MetricFigures]


#: form → relation kind → figures (the ``forms`` of retrieval, edel and feedback).
Forms = Mapping[str, Mapping[str, KindFigures]]


def gather_metrics(figures: object) -> object:
    """A raw JSON object with its keys at a cutoff (``ndcg@10``) gathered under ``metrics``, the others kept.

    Anything but an object is returned as is, for the decoder to refuse with its path.
    """
    if not isinstance(figures, dict):
        return figures
    kept = {k: v for k, v in figures.items() if "@" not in k}
    return {**kept, "metrics": {k: v for k, v in figures.items() if "@" in k}}


def gather_forms(forms: object) -> object:
    """The raw ``forms`` (form → kind → figures) with each kind's metrics gathered (what :class:`KindFigures` reads)."""
    if not isinstance(forms, dict):
        return forms
    return {form: {kind: gather_metrics(figures) for kind, figures in kinds.items()} if isinstance(kinds, dict)
            else kinds for form, kinds in forms.items()}


def with_forms_gathered(data: object) -> object:
    """A raw result with the metrics of every ``forms*`` object gathered (:func:`gather_forms`)."""
    if not isinstance(data, dict):
        return data
    return {key: gather_forms(value) if key.startswith("forms") else value for key, value in data.items()}


def read_json(results: Path, name: str) -> dict | None:
    """``results/<name>.json`` parsed but not decoded (the templates' ``{{name:dotted.path}}`` look-ups); None when
    that benchmark has not been run."""
    path = results / f"{name}.json"
    if not path.exists():
        return None
    data = load_json(path, ResultError, "benchmark result")
    if not isinstance(data, dict):
        raise ResultError(f"{path}: the file must be a JSON object")
    return data


def goals_of(data: Mapping[str, object], where: str) -> dict[str, Goal]:
    """The ``goals`` of a parsed result (none when it has none), each decoded as a :class:`Goal`."""
    goals = data.get("goals") or {}
    if not isinstance(goals, dict):
        raise ResultError(f"{where}: field 'goals' must be a JSON object")
    return {name: decode(Goal, goal, where, ResultError, prefix=f"goals.{name}.") for name, goal in goals.items()}
