"""A tiny PO corpus and knowledge base: eight abstracts (one off topic) and the KB rows that cite them, for
the train command and the retrain job tests."""

DOCS = [
    ("21", "Vemurafenib in BRAF V600E melanoma", "BRAF V600E melanoma responds to vemurafenib."),
    ("22", "Dabrafenib and BRAF V600E", "Dabrafenib inhibits BRAF V600E."),
    ("23", "Osimertinib for EGFR T790M", "EGFR T790M lung cancer responds to osimertinib."),
    ("24", "Gefitinib in EGFR L858R", "EGFR L858R tumours respond to gefitinib."),
    ("25", "Sotorasib and KRAS G12C", "KRAS G12C colorectal cancer and sotorasib."),
    ("26", "Imatinib in KIT D816V", "KIT D816V mastocytosis resists imatinib."),
    ("27", "Crizotinib for ALK fusions", "ALK fusion lung cancer responds to crizotinib."),
    ("28", "Sleep in cats", "Cats sleep most of the day."),
]
KB = [
    ("BRAF", "V600E", "Vemurafenib", "21"),
    ("BRAF", "V600E", "Dabrafenib", "22"),
    ("EGFR", "T790M", "Osimertinib", "23"),
    ("EGFR", "L858R", "Gefitinib", "24"),
    ("KRAS", "G12C", "Sotorasib", "25"),
    ("KIT", "D816V", "Imatinib", "26"),
    ("ALK", "Fusion", "Crizotinib", "27"),
    ("BRAF", "V600K", "", "22"),
]
