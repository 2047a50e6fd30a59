"""Runtime: process concerns of the served app: background builds, heap settling, exit hooks.

Owns: ``background`` (a value built in a daemon thread), ``heap`` (garbage-collector settling), ``exit`` (the
process's exit waits for background work), ``matcher`` (the matcher built ahead), ``background_work`` (work of
the whole process, such as the sample's load, in a daemon thread no session owns), ``foreground`` (when a curator
last waited on the server). May import: versions,
entities, store and the vocabulary; only curation.workflows imports it.
"""
