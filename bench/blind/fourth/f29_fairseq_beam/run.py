import math
from typing import Dict, List

import torch
import torch.nn as nn
from torch import Tensor

from .incremental_decoder import TransformerDecoder


class SequenceGenerator(nn.Module):
    def __init__(self, decoder: TransformerDecoder, beam_size: int = 2, max_len: int = 6, eos: int = 2, bos: int = 0, len_penalty: float = 1.0):
        super().__init__()
        self.decoder = decoder
        self.beam_size = beam_size
        self.max_len = max_len
        self.eos = eos
        self.bos = bos
        self.pad = decoder.padding_idx
        self.len_penalty = len_penalty

    @torch.no_grad()
    def generate(self, encoder_out: Tensor) -> List[List[Dict[str, Tensor]]]:
        bsz = encoder_out.size(0)
        beam_size = self.beam_size
        max_len = self.max_len
        new_order = torch.arange(bsz).view(-1, 1).repeat(1, beam_size).view(-1)
        encoder_out = encoder_out.index_select(0, new_order)
        incremental_state: Dict[str, Dict[str, Tensor]] = {}

        scores = torch.zeros(bsz * beam_size, max_len + 1)
        tokens = torch.full((bsz * beam_size, max_len + 2), self.pad, dtype=torch.long)
        tokens[:, 0] = self.bos
        finalized: List[List[Dict[str, Tensor]]] = [[] for _ in range(bsz)]
        finished = [False for _ in range(bsz)]
        bbsz_offsets = (torch.arange(0, bsz) * beam_size).unsqueeze(1)

        for step in range(max_len + 1):
            logits = self.decoder(tokens[:, : step + 1], encoder_out, incremental_state)
            lprobs = logits[:, -1, :].log_softmax(dim=-1)
            lprobs[:, self.pad] = -math.inf
            if step >= max_len:
                lprobs[:, : self.eos] = -math.inf
                lprobs[:, self.eos + 1 :] = -math.inf

            vocab_size = lprobs.size(-1)
            lprobs = lprobs.view(bsz, -1, vocab_size)
            if step == 0:
                lprobs = lprobs[:, ::beam_size, :].contiguous()
            else:
                lprobs = lprobs + scores[:, step - 1].view(bsz, beam_size, 1)
            top = torch.topk(lprobs.view(bsz, -1), k=min(beam_size * 2, lprobs.view(bsz, -1).size(1) - 1))
            cand_scores, cand_indices = top[0], top[1]
            cand_beams = torch.div(cand_indices, vocab_size, rounding_mode="trunc")
            cand_indices = cand_indices.fmod(vocab_size)
            cand_bbsz_idx = cand_beams + bbsz_offsets

            eos_mask = cand_indices.eq(self.eos) & cand_scores.ne(-math.inf)
            if eos_mask[:, :beam_size].any():
                eos_bbsz_idx = torch.masked_select(cand_bbsz_idx[:, :beam_size], mask=eos_mask[:, :beam_size])
                eos_scores = torch.masked_select(cand_scores[:, :beam_size], mask=eos_mask[:, :beam_size])
                for idx, score in zip(eos_bbsz_idx.tolist(), eos_scores.tolist()):
                    sent = idx // beam_size
                    if not finished[sent] and len(finalized[sent]) < beam_size:
                        finalized[sent].append({"tokens": tokens[idx, 1 : step + 2].clone(),
                                                "score": torch.tensor(score / (step + 1) ** self.len_penalty)})
                        if len(finalized[sent]) == beam_size:
                            finished[sent] = True
            if all(finished) or step == max_len:
                break

            active_mask = eos_mask.type_as(cand_offsets_like(cand_indices)) * (2 * beam_size) + cand_offsets_like(cand_indices)
            _, active_hypos = torch.topk(active_mask, k=beam_size, dim=1, largest=False)
            active_bbsz_idx = torch.gather(cand_bbsz_idx, dim=1, index=active_hypos).view(-1)
            active_scores = torch.gather(cand_scores, dim=1, index=active_hypos)

            self.decoder.reorder_incremental_state(incremental_state, active_bbsz_idx)
            tokens[:, : step + 1] = torch.index_select(tokens[:, : step + 1], dim=0, index=active_bbsz_idx)
            tokens.view(bsz, beam_size, -1)[:, :, step + 1] = torch.gather(cand_indices, dim=1, index=active_hypos)
            scores[:, : step] = torch.index_select(scores[:, : step], dim=0, index=active_bbsz_idx)
            scores.view(bsz, beam_size, -1)[:, :, step] = active_scores
        return finalized


def cand_offsets_like(cand_indices: Tensor) -> Tensor:
    return torch.arange(cand_indices.size(1), device=cand_indices.device).expand_as(cand_indices)


def main():
    torch.manual_seed(0)
    decoder = TransformerDecoder(vocab_size=12).eval()
    generator = SequenceGenerator(decoder, beam_size=2, max_len=5)
    generate = torch.compile(generator.generate)
    for src_len in (7, 7, 7):
        hypos = generate(torch.randn(2, src_len, 32))
    return hypos


if __name__ == "__main__":
    main()
