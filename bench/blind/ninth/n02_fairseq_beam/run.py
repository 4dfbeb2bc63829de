import random

import torch

from .decoder import TransformerDecoder
from .search import BeamSearch, finalize_hypos

VOCAB, BOS, PAD, EOS = 20, 0, 1, 2


class SequenceGenerator:
    def __init__(self, model, beam_size=2, max_len=6):
        self.model = model
        self.beam_size = beam_size
        self.max_len = max_len
        self.search = BeamSearch(VOCAB, EOS)
        self._decode = torch.compile(self.model)
        self._select = torch.compile(self._select_eos)

    def _select_eos(self, cand_indices, cand_scores, cand_bbsz_idx):
        eos_mask = cand_indices.eq(EOS) & cand_scores.ne(-float("inf"))
        eos_bbsz_idx = torch.masked_select(cand_bbsz_idx[:, : self.beam_size], mask=eos_mask[:, : self.beam_size])
        eos_scores = torch.masked_select(cand_scores[:, : self.beam_size], mask=eos_mask[:, : self.beam_size])
        return eos_mask, eos_bbsz_idx, eos_scores

    @torch.no_grad()
    def generate(self, bsz):
        beam = self.beam_size
        tokens = torch.full((bsz * beam, self.max_len + 2), PAD, dtype=torch.long)
        tokens[:, 0] = BOS
        scores = torch.zeros(bsz * beam, self.max_len + 1)
        finalized = [[] for _ in range(bsz)]
        incremental_state = {}
        bbsz_offsets = (torch.arange(0, bsz) * beam).unsqueeze(1)
        for step in range(self.max_len):
            logits = self._decode(tokens[:, : step + 1], incremental_state)
            lprobs = self.model.get_normalized_probs(logits[:, -1, :])
            lprobs[:, PAD] = -float("inf")
            cand_scores, cand_indices, cand_beams = self.search.step(
                step, lprobs.view(bsz, -1, VOCAB), scores.view(bsz, beam, -1)[:, :, :step])
            cand_bbsz_idx = cand_beams.add(bbsz_offsets)
            eos_mask, eos_bbsz_idx, eos_scores = self._select(cand_indices, cand_scores, cand_bbsz_idx)
            if eos_bbsz_idx.numel() > 0:
                finalize_hypos(step, eos_bbsz_idx, eos_scores, tokens, beam, finalized)
            active = cand_bbsz_idx[:, :beam].reshape(-1)
            tokens[:, : step + 1] = tokens.index_select(0, active)[:, : step + 1]
            tokens[:, step + 1] = cand_indices[:, :beam].reshape(-1)
            scores[:, step] = cand_scores[:, :beam].reshape(-1)
            for k in list(incremental_state):
                incremental_state[k] = {n: t.index_select(0, active) for n, t in incremental_state[k].items()}
        return finalized


def main():
    torch.manual_seed(0)
    random.seed(0)
    model = TransformerDecoder(VOCAB, layers=1).eval()
    gen = SequenceGenerator(model, beam_size=2, max_len=4)
    n_final = 0
    for bsz in (2, 3):
        out = gen.generate(bsz)
        n_final += sum(len(h) for h in out)
    return n_final
