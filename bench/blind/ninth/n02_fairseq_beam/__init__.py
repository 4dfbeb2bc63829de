"""fairseq-style incremental decoder + beam search (SequenceGenerator) in three modules."""
from .run import main  # noqa: F401
