import logging
import time

log = logging.getLogger("trainer")


class Callback:
    def on_step_end(self, trainer, metrics):
        pass

    def on_epoch_end(self, trainer, epoch):
        pass


class MetricLogger(Callback):
    def __init__(self, every=2):
        self.every = every
        self.n_logged = 0
        self.t0 = time.perf_counter()

    def on_step_end(self, trainer, metrics):
        if trainer.global_step % self.every == 0:
            self.n_logged += 1
            log.info("step %d loss %.4f lr %.2e", trainer.global_step, metrics["loss"], metrics["lr"])


class EarlyStopping(Callback):
    def __init__(self, patience=2, min_delta=1e-4):
        self.patience, self.min_delta = patience, min_delta
        self.best, self.bad_epochs = float("inf"), 0

    def on_epoch_end(self, trainer, epoch):
        val = trainer.validate()
        if val < self.best - self.min_delta:
            self.best, self.bad_epochs = val, 0
            trainer.save_checkpoint()
        else:
            self.bad_epochs += 1
            trainer.should_stop = self.bad_epochs >= self.patience
