"""The entity linker's home: its data (``data``: synonym sets, dictionary, dev and test mentions), its training
(``name_encoder``: the SapBERT-style fine-tuning through the one loop; ``calibration``: w and the apply rule chosen on
dev; ``training``: the folder staged with its manifest), its learner (``learner``) and activation rule (``activation``).

Its serving (the linkers, loading a folder, its manifest, the apply rule read at annotate time) stays in
:mod:`curation.entities.linking` and :mod:`curation.entities.link_calibration`: entities is below learning and the
annotator (entities) links names with it. May import: what learning may.
"""
