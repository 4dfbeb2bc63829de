"""Solver settings shared by the dynamics model and the experiment script."""
from dataclasses import dataclass


@dataclass
class SolverConfig:
    rtol: float = 1e-3
    atol: float = 1e-5
    safety: float = 0.9
    max_steps: int = 50
    min_factor: float = 0.2
    max_factor: float = 5.0


SOLVER = SolverConfig()
