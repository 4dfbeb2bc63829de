"""fastai-style Learner whose callbacks mutate learner state around a compiled one_batch."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Callback:
    order = 0
    learn = None

    def __call__(self, event_name):
        fn = getattr(self, event_name, None)
        if fn is not None:
            fn()


class TrainEvalCallback(Callback):
    order = -10

    def before_fit(self):
        self.learn.train_iter = 0
        self.learn.pct_train = 0.0

    def after_batch(self):
        self.learn.train_iter += 1
        self.learn.pct_train += 1.0 / (self.learn.n_iter * self.learn.n_epoch)


class ParamScheduler(Callback):
    def __init__(self, lr_max=1e-2):
        self.lr_max = lr_max

    def before_batch(self):
        pct = self.learn.pct_train
        self.learn.lr = self.lr_max * (1 - pct) if pct > 0.3 else self.lr_max * (pct / 0.3 + 0.01)


class Recorder(Callback):
    order = 50

    def before_fit(self):
        self.losses, self.smooth_loss = [], 0.0

    def after_loss(self):
        self.smooth_loss = 0.98 * self.smooth_loss + 0.02 * self.learn.loss.item()
        self.losses.append(self.smooth_loss)


class GradientClip(Callback):
    def __init__(self, max_norm=1.0):
        self.max_norm = max_norm

    def before_step(self):
        nn.utils.clip_grad_norm_(self.learn.model.parameters(), self.max_norm)


class Learner:
    def __init__(self, model, loss_func, cbs):
        self.model, self.loss_func = model, loss_func
        self.cbs = sorted(cbs + [TrainEvalCallback()], key=lambda c: c.order)
        for cb in self.cbs:
            cb.learn = self
        self.opt = torch.optim.SGD(model.parameters(), lr=1e-2)
        self.lr = 1e-2

    def __call__(self, event_name):
        for cb in self.cbs:
            cb(event_name)

    def one_batch(self, i, xb, yb):
        self.iter = i
        self("before_batch")
        self.pred = self.model(xb)
        self("after_pred")
        self.loss = self.loss_func(self.pred, yb)
        self("after_loss")
        return self.loss

    def fit(self, n_epoch, batches):
        self.n_epoch, self.n_iter = n_epoch, len(batches)
        step = torch.compile(self.one_batch)
        self("before_fit")
        for self.epoch in range(n_epoch):
            for i, (xb, yb) in enumerate(batches):
                loss = step(i, xb, yb)
                loss.backward()
                self("before_step")
                for g in self.opt.param_groups:
                    g["lr"] = self.lr
                self.opt.step()
                self.opt.zero_grad()
                self("after_batch")


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 3))
    batches = [(torch.randn(16, 8), torch.randint(0, 3, (16,))) for _ in range(3)]
    learn = Learner(model, F.cross_entropy, [ParamScheduler(), Recorder(), GradientClip()])
    learn.fit(2, batches)
    assert learn.train_iter == 6


if __name__ == "__main__":
    main()
