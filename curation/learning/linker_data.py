"""The linker's data moved to :mod:`curation.learning.linker.data`; these names stay for bench/ until it imports
them from there."""

from curation.learning.linker.data import LinkerData, corpus_names, hold_out_drugbank, load_linker_data

__all__ = ["LinkerData", "corpus_names", "hold_out_drugbank", "load_linker_data"]
