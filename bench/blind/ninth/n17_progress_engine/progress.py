import io
import time


class ProgressBar:
    """Minimal tqdm clone: rate, ETA and a postfix dict, redrawn with a carriage return."""

    def __init__(self, total, desc="", stream=None, mininterval=0.0):
        self.total = total
        self.desc = desc
        self.n = 0
        self.stream = stream if stream is not None else io.StringIO()
        self.start_t = time.time()
        self.last_print_t = self.start_t
        self.mininterval = mininterval
        self.postfix = {}

    def set_postfix(self, **kwargs):
        for k, v in kwargs.items():
            self.postfix[k] = f"{v:.4f}" if not isinstance(v, str) else v

    def update(self, n=1):
        self.n += n
        now = time.time()
        if now - self.last_print_t >= self.mininterval:
            self.last_print_t = now
            self.refresh(now)

    def refresh(self, now):
        rate = self.n / max(now - self.start_t, 1e-9)
        post = ", ".join(f"{k}={v}" for k, v in self.postfix.items())
        self.stream.write(f"\r{self.desc}: {self.n}/{self.total} [{rate:.1f}it/s, {post}]")

    def close(self):
        self.stream.write("\n")
