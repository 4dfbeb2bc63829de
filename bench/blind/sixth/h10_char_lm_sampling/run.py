import torch
import torch.nn.functional as F

from .model import EOS, CharGRU, decode, encode
from .sampling import sample_next

CORPUS = "the cat sat on the mat.\nthe dog ate the log.\na bird sang a song.\n" * 4


def train(model, steps=30, seq=24):
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    data = encode(CORPUS)
    step_fn = torch.compile(model)
    g = torch.Generator().manual_seed(0)
    for _ in range(steps):
        starts = torch.randint(0, len(data) - seq - 1, (8,), generator=g)
        x = torch.stack([data[s:s + seq] for s in starts])
        y = torch.stack([data[s + 1:s + seq + 1] for s in starts])
        logits, _ = step_fn(x)
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()


@torch.no_grad()
def generate(model, prompt, max_new=12, **sampling):
    ids = encode(prompt)[None]
    logits, h = model(ids)
    out = []
    for _ in range(max_new):
        tok = sample_next(logits[0, -1], out[-4:], **sampling)
        if int(tok) == EOS:
            break
        out.append(int(tok))
        logits, h = model(tok[None], h)
    return prompt + decode(out)


def main():
    torch.manual_seed(0)
    model = CharGRU()
    train(model)
    model.eval()
    samples = [
        generate(model, "the ", temperature=1.0),
        generate(model, "a b", temperature=0.7, top_p=0.9),
        generate(model, "the d", temperature=0.7, top_p=0.9, penalty=1.3),
    ]
    return samples
