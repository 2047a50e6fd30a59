"""Screening a topic: the in-session learner that re-ranks a topic's unread candidates after every grade, the
reading metrics screening tools are judged by, a graded topic simulated (topic_simulation), and the estimate of
how many relevant abstracts remain.

May import: retrieval (a topic's candidates are the served search's), ranking (evidence features), the vocabulary;
never the store or the workflows (the queue's state is kept by :mod:`curation.store.screening`).
"""
