"""Agreement's disagreements under their old address, for bench/team.py.

The statistics live in :mod:`curation.review.agreement`; delete this module once bench/team.py imports from there.
"""

from __future__ import annotations

from curation.review.agreement import disagreements

__all__ = ["disagreements"]
