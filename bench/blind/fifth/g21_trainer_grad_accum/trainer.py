"""A small Trainer with gradient accumulation, warmup-cosine LR and callbacks."""
import logging
import math
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional

import torch
import torch.nn as nn

logger = logging.getLogger("trainer")


@dataclass
class TrainingArguments:
    learning_rate: float = 3e-3
    warmup_steps: int = 2
    max_steps: int = 8
    gradient_accumulation_steps: int = 2
    max_grad_norm: Optional[float] = 1.0
    logging_steps: int = 2
    label_smoothing: float = 0.0
    compile: bool = True


@dataclass
class TrainerState:
    global_step: int = 0
    micro_step: int = 0
    epoch: float = 0.0
    log_history: List[Dict[str, float]] = field(default_factory=list)


class TrainerCallback:
    def on_step_end(self, args, state, logs): ...

    def on_log(self, args, state, logs): ...


class Trainer:
    def __init__(self, model: nn.Module, args: TrainingArguments, loss_fn: Callable = None,
                 callbacks: Optional[List[TrainerCallback]] = None):
        self.model = model
        self.args = args
        self.loss_fn = loss_fn or nn.CrossEntropyLoss(label_smoothing=args.label_smoothing)
        self.callbacks = callbacks or []
        self.state = TrainerState()
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate, weight_decay=0.01)
        self._accumulated_loss = 0.0
        self.training_step = torch.compile(self._training_step) if args.compile else self._training_step

    def get_lr(self, step):
        if step < self.args.warmup_steps:
            return self.args.learning_rate * (step + 1) / self.args.warmup_steps
        progress = (step - self.args.warmup_steps) / max(1, self.args.max_steps - self.args.warmup_steps)
        return self.args.learning_rate * 0.5 * (1.0 + math.cos(math.pi * progress))

    def _training_step(self, inputs: Dict[str, torch.Tensor]):
        self.model.train()
        logits = self.model(inputs["input"])
        loss = self.loss_fn(logits, inputs["labels"])
        loss = loss / self.args.gradient_accumulation_steps
        loss.backward()
        self._accumulated_loss += loss.detach().item()
        self.state.micro_step += 1
        return loss.detach()

    def optimizer_step(self):
        lr = self.get_lr(self.state.global_step)
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        if self.args.max_grad_norm is not None:
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.args.max_grad_norm)
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        self.state.global_step += 1
        return lr

    def train(self, dataloader):
        for inputs in dataloader:
            self.training_step(inputs)
            if self.state.micro_step % self.args.gradient_accumulation_steps != 0:
                continue
            lr = self.optimizer_step()
            logs = {"loss": self._accumulated_loss, "lr": lr, "step": self.state.global_step}
            self._accumulated_loss = 0.0
            for cb in self.callbacks:
                cb.on_step_end(self.args, self.state, logs)
            if self.state.global_step % self.args.logging_steps == 0:
                self.state.log_history.append(logs)
                for cb in self.callbacks:
                    cb.on_log(self.args, self.state, logs)
            if self.state.global_step >= self.args.max_steps:
                break
        return self.state
