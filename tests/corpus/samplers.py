"""Samplers: temperature, top-k, top-p, a noisy exploration step, and diffusion schedulers whose compiled `step`
keeps its step index as a Python int (Euler), a flag of which order runs (Heun), a list of past outputs and a
count of lower-order steps (multistep)."""
import random

import numpy as np
import torch


@torch.compile
def sample_top_k(logits, k: int = 3, temperature: float = 1.0):
    if temperature == 0.0:  # ok
        return logits.argmax(-1)
    logits = logits / temperature
    top, idx = logits.topk(k, dim=-1)  # ok
    probs = top.softmax(-1)
    choice = torch.multinomial(probs, 1)
    return idx.gather(-1, choice).squeeze(-1)


@torch.compile
def sample_top_p(logits, p: float = 0.9):
    sorted_logits, order = logits.sort(dim=-1, descending=True)
    cum = sorted_logits.softmax(-1).cumsum(-1)
    remove = cum - sorted_logits.softmax(-1) > p
    sorted_logits = sorted_logits.masked_fill(remove, float("-inf"))  # ok
    choice = torch.multinomial(sorted_logits.softmax(-1), 1)
    return order.gather(-1, choice).squeeze(-1)


@torch.compile
def epsilon_greedy(q_values, epsilon: float = 0.1):
    if random.random() < epsilon:  # expect: DYN308
        return torch.randint(0, q_values.shape[-1], q_values.shape[:-1])
    return q_values.argmax(-1)


@torch.compile
def noisy_logits(logits):
    jitter = np.random.uniform(0.9, 1.1)  # expect: DYN405
    noise = torch.from_numpy(np.random.randn(*logits.shape)).to(logits.dtype)  # ok
    return logits * jitter + 0.01 * noise  # expect: DYN510


@torch.compile
def reproducible_sample(logits, seed: int = 0):
    torch.manual_seed(seed)  # expect: DYN317
    return torch.multinomial(logits.softmax(-1), 1)


@torch.compile
def gumbel_sample(logits):
    u = torch.rand_like(logits).clamp(1e-9, 1 - 1e-9)  # ok
    shift = random.randint(0, 2)  # ok
    return (logits - torch.log(-torch.log(u))).argmax(-1) + shift


class EulerScheduler:
    def __init__(self, num_train_timesteps=1000):
        betas = torch.linspace(1e-4, 0.02, num_train_timesteps)
        alphas_cumprod = torch.cumprod(1.0 - betas, dim=0)
        self.sigmas_all = ((1 - alphas_cumprod) / alphas_cumprod) ** 0.5
        self._step_index = None
        self.timesteps = None

    @property
    def step_index(self):
        return self._step_index

    def set_timesteps(self, num_inference_steps):
        idx = torch.linspace(0, len(self.sigmas_all) - 1, num_inference_steps).long()
        self.sigmas = torch.cat([self.sigmas_all[idx].flip(0), torch.zeros(1)])
        self.timesteps = idx.flip(0)
        self._step_index = None

    def _init_step_index(self, timestep):
        self._step_index = 0

    def step(self, model_output, timestep, sample):
        if self.step_index is None:  # expect: DYN306
            self._init_step_index(timestep)
        sigma = self.sigmas[self.step_index]
        sigma_next = self.sigmas[self.step_index + 1]
        prev = sample + (sigma_next - sigma) * model_output
        self._step_index += 1
        return prev


def denoise(x, sched):
    step = torch.compile(sched.step)
    for t in sched.timesteps:
        x = step(x * 0.1, t, x)
    return x


class HeunScheduler:
    """Two evaluations per step: the first order keeps its derivative and `dt` for the second (a property says
    which order runs)."""

    def __init__(self, num_train_timesteps=1000):
        betas = torch.linspace(1e-4, 0.02, num_train_timesteps)
        alphas_cumprod = torch.cumprod(1.0 - betas, dim=0)
        self.sigmas_all = ((1 - alphas_cumprod) / alphas_cumprod) ** 0.5
        self._step_index = None
        self.prev_derivative = None
        self.dt = None
        self.sample = None

    @property
    def state_in_first_order(self):
        return self.dt is None  # expect: DYN512

    def set_timesteps(self, num_inference_steps):
        idx = torch.linspace(0, len(self.sigmas_all) - 1, num_inference_steps).long().flip(0)
        sigmas = self.sigmas_all[idx]
        self.sigmas = torch.cat([sigmas[:1], sigmas[1:].repeat_interleave(2), torch.zeros(1)])
        self.timesteps = torch.cat([idx[:1], idx[1:].repeat_interleave(2)])
        self._step_index = None

    def step(self, model_output, timestep, sample):
        if self._step_index is None:  # expect: DYN306, DYN512
            self._step_index = 0
        if self.state_in_first_order:
            sigma = self.sigmas[self._step_index]
            sigma_next = self.sigmas[self._step_index + 1]
        else:
            sigma = self.sigmas[self._step_index - 1]
            sigma_next = self.sigmas[self._step_index]
        derivative = (sample - model_output) / sigma
        if self.state_in_first_order:
            self.prev_derivative = derivative
            self.dt = sigma_next - sigma
            self.sample = sample
            prev = sample + derivative * self.dt
        else:
            derivative = (self.prev_derivative + derivative) / 2
            prev = self.sample + derivative * self.dt
            self.prev_derivative = None
            self.dt = None
            self.sample = None
        self._step_index += 1
        return prev


class MultistepScheduler:
    """A second-order multistep solver: the last model outputs in a list, a count of the lower-order steps."""

    def __init__(self, num_train_timesteps=1000, order=2):
        self.order = order
        self.model_outputs = [None] * order
        self.lower_order_nums = 0
        self._step_index = None
        betas = torch.linspace(1e-4, 0.02, num_train_timesteps)
        self.alphas_cumprod = torch.cumprod(1.0 - betas, dim=0)

    def set_timesteps(self, num_inference_steps):
        self.timesteps = torch.linspace(999, 0, num_inference_steps).long()
        self.model_outputs = [None] * self.order
        self.lower_order_nums = 0
        self._step_index = None

    def first_order_update(self, x0, sample):
        alpha = self.alphas_cumprod[self.timesteps[self._step_index]]  # miss: the step index, read in a helper
        return alpha.sqrt() * x0 + (1 - alpha).sqrt() * sample

    def second_order_update(self, sample):
        m0, m1 = self.model_outputs[-1], self.model_outputs[-2]  # ok
        return sample + 0.5 * (m0 - m1)

    def step(self, model_output, timestep, sample):
        if self._step_index is None:  # expect: DYN306, DYN512
            self._step_index = 0
        lower_order_final = self._step_index == len(self.timesteps) - 1
        for i in range(self.order - 1):
            self.model_outputs[i] = self.model_outputs[i + 1]
        self.model_outputs[-1] = model_output
        if self.order == 1 or self.lower_order_nums < 1 or lower_order_final:  # expect: DYN306
            prev = self.first_order_update(model_output, sample)
        else:
            prev = self.second_order_update(sample)
        if self.lower_order_nums < self.order:
            self.lower_order_nums += 1
        self._step_index += 1
        return prev


def sample_with(sched, steps=6):
    sched.set_timesteps(steps)
    step = torch.compile(sched.step)
    x = torch.randn(2, 4)
    for t in sched.timesteps:
        x = step(x * 0.9, t, x)
    return x


def __dynlint_calls__():
    torch.manual_seed(0)
    random.seed(0)
    logits = torch.randn(2, 10)
    sample_top_k(logits)
    sample_top_p(logits)
    epsilon_greedy(logits)
    noisy_logits(logits)
    reproducible_sample(logits)
    gumbel_sample(logits)
    euler = EulerScheduler()
    euler.set_timesteps(6)
    denoise(torch.randn(2, 4), euler)
    sample_with(HeunScheduler())
    sample_with(MultistepScheduler())
