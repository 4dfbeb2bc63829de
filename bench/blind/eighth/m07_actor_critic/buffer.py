"""Episode storage and discounted-return computation."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import List

import torch


@dataclass
class EpisodeBuffer:
    gamma: float = 0.97
    obs: List[torch.Tensor] = field(default_factory=list)
    actions: List[torch.Tensor] = field(default_factory=list)
    rewards: List[float] = field(default_factory=list)

    def add(self, obs: torch.Tensor, action: torch.Tensor, reward: float) -> None:
        self.obs.append(obs)
        self.actions.append(action)
        self.rewards.append(reward)

    def returns(self) -> torch.Tensor:
        out, g = [], 0.0
        for r in reversed(self.rewards):
            g = r + self.gamma * g
            out.append(g)
        return torch.tensor(out[::-1])

    def tensors(self):
        return torch.stack(self.obs), torch.stack(self.actions), self.returns()

    def clear(self) -> None:
        self.obs.clear()
        self.actions.clear()
        self.rewards.clear()
