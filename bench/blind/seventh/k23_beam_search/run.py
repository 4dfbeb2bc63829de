import torch

from . import settings
from .decoder import TinyDecoder, beam_step
from .search import beam_search


def main():
    torch.manual_seed(0)
    model = TinyDecoder().eval()
    step_fn = torch.compile(beam_step)
    with torch.no_grad():
        h0 = torch.zeros(1, 16)
        print(beam_search(model, step_fn, h0)[1])
        # prefer longer outputs on the second pass
        settings.LENGTH_PENALTY = 1.5
        print(beam_search(model, step_fn, h0, max_len=3)[1])
