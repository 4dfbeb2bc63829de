"""tinygpt: a small decoder-only transformer used to show what breaks torch.compile."""
from tinygpt.model import TinyGPT, GPTConfig

__all__ = ["TinyGPT", "GPTConfig"]
