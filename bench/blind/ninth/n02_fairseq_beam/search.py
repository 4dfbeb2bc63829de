import torch
import torch.nn as nn


class BeamSearch(nn.Module):
    def __init__(self, vocab_size, eos):
        super().__init__()
        self.vocab_size = vocab_size
        self.eos = eos

    def step(self, step: int, lprobs, scores):
        bsz, beam_size, vocab_size = lprobs.size()
        if step == 0:
            # at the start every beam is identical: only use the first one
            lprobs = lprobs[:, ::beam_size, :].contiguous()
        else:
            lprobs = lprobs + scores[:, :, step - 1].unsqueeze(-1)
        flat = lprobs.view(bsz, -1)
        top_prediction = torch.topk(flat, k=min(beam_size * 2, flat.size(1) - 1))
        scores_buf = top_prediction[0]
        indices_buf = top_prediction[1]
        beams_buf = torch.div(indices_buf, vocab_size, rounding_mode="trunc")
        indices_buf = indices_buf.fmod(vocab_size)
        return scores_buf, indices_buf, beams_buf


def finalize_hypos(step, bbsz_idx, eos_scores, tokens, beam_size, finalized):
    """Move finished hypotheses into `finalized` (list of lists of dicts)."""
    tokens_clone = tokens.index_select(0, bbsz_idx)[:, 1:step + 2]
    norm_scores = eos_scores / (step + 1)
    sents = torch.div(bbsz_idx, beam_size, rounding_mode="trunc").tolist()
    for i, sent in enumerate(sents):
        finalized[sent].append({"tokens": tokens_clone[i], "score": norm_scores[i]})
    return len(sents)
