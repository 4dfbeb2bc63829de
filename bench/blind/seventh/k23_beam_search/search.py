import torch

from . import settings
from .decoder import TinyDecoder, beam_step


def beam_search(model, step_fn, h0, bos=0, max_len=5):
    n = settings.NUM_BEAMS
    tokens = torch.full((n,), bos, dtype=torch.long)
    h = h0.expand(n, -1).contiguous()
    scores = torch.tensor([0.0] + [-1e9] * (n - 1))
    hyps = []
    for cur_len in range(1, max_len + 1):
        log_probs, h = model(tokens, h)
        beam_idx, tokens, scores, finished = step_fn(log_probs, scores, cur_len)
        hyps.extend(finished)
        h = h[beam_idx]
    return hyps, scores
