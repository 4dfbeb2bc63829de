from typing import Dict, List

import torch

from .module import LitClassifier, LightningModule


class Trainer:
    def __init__(self, max_epochs: int = 1, log_every_n_steps: int = 2, compile_step: bool = True):
        self.max_epochs = max_epochs
        self.log_every_n_steps = log_every_n_steps
        self.compile_step = compile_step
        self.global_step = 0
        self.current_epoch = 0
        self.logged_metrics: Dict[str, float] = {}
        self.progress_bar_metrics: Dict[str, float] = {}

    def fit(self, module: LightningModule, train_batches: List, val_batches: List):
        module.trainer = self
        optimizer = module.configure_optimizers()
        training_step = torch.compile(module.training_step) if self.compile_step else module.training_step
        for epoch in range(self.max_epochs):
            self.current_epoch = epoch
            module.train()
            module._current_fx_name = "training_step"
            for batch_idx, batch in enumerate(train_batches):
                loss = training_step(batch, batch_idx)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                self.global_step += 1
            module.eval()
            module._current_fx_name = "validation_step"
            with torch.no_grad():
                for batch_idx, batch in enumerate(val_batches):
                    module.validation_step(batch, batch_idx)
        return self.logged_metrics


def main():
    torch.manual_seed(0)
    batches = [(torch.randn(8, 16), torch.randint(0, 4, (8,))) for _ in range(3)]
    trainer = Trainer(max_epochs=1, log_every_n_steps=2)
    return trainer.fit(LitClassifier(), batches, batches[:1])


if __name__ == "__main__":
    main()
