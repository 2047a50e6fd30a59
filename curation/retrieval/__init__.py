"""The served search: a typed partial relation → linked concepts → ranked hits (relation_search), where a typed
name is written in the stored text (written), and the choice of its dense share on dev (served_fusion). Imports
entities, index and the vocabulary; used by learning (to choose a version's served fusion on dev), workflows and cli."""
