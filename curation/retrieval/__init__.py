"""The served search: a typed partial relation → linked concepts → ranked hits (relation_search), the hits as rows
with their entity spans (result_rows) and the Curate page's filter over them (row_filter), where a typed name is
written in the stored text (written), a command's relation checked against the schemas (search_request). Imports
ranking, entities, the store, index and the vocabulary; used by learning (to choose a version's served fusion on
dev), screening, review and workflows."""
