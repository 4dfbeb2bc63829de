"""Feature schema and config objects for a tabular model (categorical + numerical features)."""
from dataclasses import dataclass, field
from typing import Dict, List


@dataclass(frozen=True)
class CategoricalFeature:
    name: str
    cardinality: int
    emb_dim: int = 4


@dataclass
class TabularConfig:
    categorical: List[CategoricalFeature] = field(default_factory=lambda: [
        CategoricalFeature("country", 10), CategoricalFeature("device", 4, 2), CategoricalFeature("plan", 3, 2)])
    numerical: List[str] = field(default_factory=lambda: ["age", "tenure", "spend", "visits"])
    hidden: List[int] = field(default_factory=lambda: [32, 16])
    dropout: float = 0.1
    impute_value: float = 0.0
    output: str = "binary"

    @property
    def input_dim(self):
        return sum(f.emb_dim for f in self.categorical) + len(self.numerical)

    def feature_index(self) -> Dict[str, int]:
        return {name: i for i, name in enumerate(self.numerical)}
