"""Switch/Mixtral-style sparse mixture-of-experts block: router, experts, training loop."""
from .run import main  # noqa: F401
