import torch
import torch.nn.functional as F

from .progress import ProgressBar


class Engine:
    def __init__(self, model, optimizer, max_norm=1.0, log_every=1):
        self.model = model
        self.optimizer = optimizer
        self.max_norm = max_norm
        self.log_every = log_every
        self.pbar = None
        self.iteration = 0
        self._forward = torch.compile(self.forward_loss)

    def forward_loss(self, x, y):
        logits = self.model(x)
        loss = F.cross_entropy(logits, y)
        with torch.no_grad():
            acc = (logits.argmax(-1) == y).float().mean()
        self.pbar.set_postfix(loss=loss.detach(), acc=acc)
        self.pbar.update(1)
        return loss

    def train_step(self, batch):
        x, y = batch
        self.model.train()
        loss = self._forward(x, y)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.max_norm)
        self.optimizer.step()
        self.iteration += 1
        return loss.detach()

    def run(self, loader, max_epochs=1):
        for epoch in range(max_epochs):
            self.pbar = ProgressBar(total=len(loader), desc=f"epoch {epoch}")
            for batch in loader:
                self.train_step(batch)
            self.pbar.close()
        return self.pbar.stream.getvalue()
