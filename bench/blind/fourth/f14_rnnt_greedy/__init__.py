from .model import RNNT, RNNTConfig

__all__ = ["RNNT", "RNNTConfig"]
