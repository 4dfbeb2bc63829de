"""Stable-Baselines3-style actor-critic policy, distributions and rollout buffer with GAE."""
