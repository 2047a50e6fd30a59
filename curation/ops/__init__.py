"""Operations: backups of the open store and recovery of a damaged one.

May import: jobs (process liveness), store and the vocabulary.
"""
