"""Retrieval: encoders, dense (FAISS) and lexical (BM25) indexes, fusion, search.

No Streamlit import, nothing loaded at import time. Every retriever returns the same hit
shape, ``dict[query_id, dict[doc_id, score]]`` (BEIR's; ``index.hits.Run``), and fusion takes and
returns it.
"""
