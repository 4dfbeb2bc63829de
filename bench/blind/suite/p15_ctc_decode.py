"""Speech recognition decoding: greedy CTC collapse, per-utterance lengths, and text assembly."""
import torch

VOCAB = ["_", "a", "b", "c", "d", " "]


def ctc_greedy(log_probs, blank=0):
    best = log_probs.argmax(-1)
    collapsed = torch.unique_consecutive(best)
    return collapsed[collapsed != blank]


def batch_decode(log_probs, lengths):
    best = log_probs.argmax(-1)
    texts = []
    for b, n in enumerate(lengths.tolist()):
        ids = best[b, :n]
        prev = -1
        chars = []
        for t in ids:
            if t != prev and t != 0:
                chars.append(VOCAB[t])
            prev = t
        texts.append("".join(chars))
    return texts


def ctc_loss_step(log_probs, targets, in_lens, tgt_lens):
    lp = log_probs.log_softmax(-1).transpose(0, 1)
    return torch.nn.functional.ctc_loss(lp, targets, in_lens, tgt_lens, blank=0, zero_infinity=True)


def main():
    torch.manual_seed(0)
    greedy = torch.compile(ctc_greedy, backend="eager")
    greedy(torch.randn(20, 6))
    greedy(torch.randn(25, 6))

    dec = torch.compile(batch_decode, backend="eager")
    dec(torch.randn(2, 10, 6), torch.tensor([10, 7]))
    dec(torch.randn(2, 10, 6), torch.tensor([8, 9]))

    loss = torch.compile(ctc_loss_step, backend="eager")
    loss(torch.randn(2, 12, 6), torch.randint(1, 6, (2, 4)), torch.tensor([12, 10]), torch.tensor([4, 3]))
    loss(torch.randn(2, 12, 6), torch.randint(1, 6, (2, 4)), torch.tensor([12, 12]), torch.tensor([4, 4]))
