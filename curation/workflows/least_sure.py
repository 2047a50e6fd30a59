"""The annotation queue's orders under their old address, for pages/annotate.py and bench/_queue_orders.py.

The algorithm lives in :mod:`curation.review.least_sure`; delete this module once those two import from there
(or the page takes its orders from :mod:`curation.workflows.annotation_queue`).
"""

from __future__ import annotations

from curation.review.least_sure import ORDERS, least_sure, ranking_mode

__all__ = ["ORDERS", "least_sure", "ranking_mode"]
