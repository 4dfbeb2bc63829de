import logging

import torch
import torch.nn as nn

from .trainer import Trainer, TrainerCallback, TrainingArguments


class PrinterCallback(TrainerCallback):
    def on_log(self, args, state, logs):
        logging.getLogger("trainer").info("step %d loss %.4f lr %.2e", logs["step"], logs["loss"], logs["lr"])


class GradualUnfreeze(TrainerCallback):
    def __init__(self, model, at_step):
        self.model = model
        self.at_step = at_step

    def on_step_end(self, args, state, logs):
        if state.global_step == self.at_step:
            for p in self.model[0].parameters():
                p.requires_grad_(True)


def synthetic_loader(num_batches, batch_sizes, dim=10, classes=3, seed=0):
    g = torch.Generator().manual_seed(seed)
    for i in range(num_batches):
        bs = batch_sizes[i % len(batch_sizes)]
        yield {"input": torch.randn(bs, dim, generator=g), "labels": torch.randint(0, classes, (bs,), generator=g)}


def main():
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 32), nn.GELU(), nn.Dropout(0.1), nn.Linear(32, 3))
    for p in model[0].parameters():
        p.requires_grad_(False)
    args = TrainingArguments(max_steps=4, gradient_accumulation_steps=2, label_smoothing=0.1)
    trainer = Trainer(model, args, callbacks=[PrinterCallback(), GradualUnfreeze(model, at_step=2)])
    state = trainer.train(synthetic_loader(10, batch_sizes=[8, 8, 5]))
    print("finished at step", state.global_step, "logs", len(state.log_history))


if __name__ == "__main__":
    main()
