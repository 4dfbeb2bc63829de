from typing import List

import torch

from .model import RNNT, RNNTConfig


@torch.compile
def greedy_search(model: RNNT, features: torch.Tensor, lengths: torch.Tensor, max_symbols_per_step: int = 3) -> List[List[int]]:
    enc, enc_lengths = model.transcribe(features, lengths)
    hyps = []
    for b in range(enc.size(0)):
        hyp: List[int] = []
        token = torch.full((1, 1), model.blank, dtype=torch.long)
        pred_out, state = model.predict(token)
        for t in range(int(enc_lengths[b])):
            frame = enc[b : b + 1, t : t + 1]
            emitted = 0
            while emitted < max_symbols_per_step:
                logits = model.join(frame, pred_out)[0, 0, 0]
                k = int(logits.argmax())
                if k == model.blank:
                    break
                hyp.append(k)
                pred_out, state = model.predict(torch.tensor([[k]]), state)
                emitted += 1
        hyps.append(hyp)
    return hyps


def main():
    torch.manual_seed(0)
    model = RNNT(RNNTConfig()).eval()
    with torch.no_grad():
        for T in (16, 16):
            feats = torch.randn(2, T, 20)
            hyps = greedy_search(model, feats, torch.tensor([T, T - 4]))
    return hyps


if __name__ == "__main__":
    main()
