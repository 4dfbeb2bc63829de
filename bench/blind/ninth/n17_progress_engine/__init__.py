"""An ignite/accelerate-like Engine whose compiled train step reports to a tqdm-like progress bar."""
from .run import main  # noqa: F401
