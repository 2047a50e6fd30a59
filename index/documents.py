"""What the retrieval package needs of a document and of a query template, as protocols.

``index`` never imports ``curation``: anything with these attributes can be indexed or searched
(``curation.records.TextDocument`` and ``curation.schemas.QueryTemplate`` are the ones the app passes).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol


class TextDocument(Protocol):
    """An abstract as the indexes see it: an id, a title, an abstract, and the two joined."""

    @property
    def pmid(self) -> str: ...

    @property
    def title(self) -> str: ...

    @property
    def abstract(self) -> str: ...

    @property
    def text(self) -> str: ...


class QueryTemplate(Protocol):
    """Turns a partial relation (entity type -> typed value) into query text."""

    def render_query(self, values: Mapping[str, str]) -> str: ...
