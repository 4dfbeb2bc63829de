"""gb_type -> GB id, read from the graph-break registry of the *installed* torch.

Ids and gb_type strings change between releases (2.13 ships 517 ids, 2.11 426 gb_types), so they are never
hard-coded. The JSON file is located without importing torch; torch < 2.7 ships none, and then every id
falls back to the documentation link Dynamo prints with each break (see logparse).
"""
from __future__ import annotations

import importlib.util
import json
import os
from functools import lru_cache
from typing import Dict, Optional


def registry_path() -> Optional[str]:
    spec = importlib.util.find_spec("torch")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        path = os.path.join(folder, "_dynamo", "graph_break_registry.json")
        if os.path.exists(path):
            return path
    return None


@lru_cache(maxsize=None)
def load_gb_ids(path: Optional[str] = None) -> Dict[str, str]:
    """{gb_type: "GBnnnn"}; {} when the installed torch has no registry.

    A few gb_types carry two ids; the last one wins, as in torch._dynamo.exc.
    """
    path = path or registry_path()
    if not path:
        return {}
    try:
        with open(path, encoding="utf-8") as f:
            registry = json.load(f)
    except (OSError, ValueError):
        return {}
    return {entry["Gb_type"]: gb_id for gb_id, entries in registry.items() for entry in entries
            if isinstance(entry, dict) and "Gb_type" in entry}
