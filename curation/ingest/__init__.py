"""Loaders and fetchers: files (CIViC, UniProt, PubMed XML, PubTator, JSON lines, KB TSV) or NCBI/CIViC in, records out.

Owns: one module per format (and the writers of the KB formats), the row-problem collector, the online fetchers,
the documents ``annotate`` reads (``annotation_inputs``), the sample's files (``sample``), and loading a file into
the store (``loading``: the one module here with database access).
May import: curation.store (``loading`` only) and the shared vocabulary (curation.records, schemas, errors, config).
"""
