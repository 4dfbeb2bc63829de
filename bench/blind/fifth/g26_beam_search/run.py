import torch

from .model import TinyLM, reorder_cache


class BeamHypotheses:
    def __init__(self, num_beams, length_penalty):
        self.num_beams = num_beams
        self.length_penalty = length_penalty
        self.beams = []
        self.worst_score = 1e9

    def add(self, tokens, sum_logprobs):
        score = sum_logprobs / (len(tokens) ** self.length_penalty)
        if len(self.beams) < self.num_beams or score > self.worst_score:
            self.beams.append((score, tokens))
            if len(self.beams) > self.num_beams:
                self.beams.sort(key=lambda b: b[0])
                self.beams.pop(0)
            self.worst_score = min(s for s, _ in self.beams)

    def is_done(self, best_sum_logprobs, cur_len):
        if len(self.beams) < self.num_beams:
            return False
        return self.worst_score >= best_sum_logprobs / cur_len ** self.length_penalty


@torch.no_grad()
def beam_search(step_fn, num_layers, prompt, num_beams=3, max_new_tokens=6, eos_id=1, length_penalty=1.0):
    cache = [dict() for _ in range(num_layers)]
    input_ids = prompt.repeat(num_beams, 1)
    beam_scores = torch.zeros(num_beams)
    beam_scores[1:] = -1e9
    hyps = BeamHypotheses(num_beams, length_penalty)
    logprobs = step_fn(input_ids, 0, cache)
    for _ in range(max_new_tokens):
        vocab = logprobs.shape[-1]
        next_scores = (logprobs + beam_scores[:, None]).view(-1)
        top_scores, top_ids = next_scores.topk(2 * num_beams)
        beam_idx = top_ids // vocab
        token_idx = top_ids % vocab
        new_beams = []
        for score, b, tok in zip(top_scores.tolist(), beam_idx.tolist(), token_idx.tolist()):
            if tok == eos_id:
                hyps.add(input_ids[b].tolist(), score)
            else:
                new_beams.append((score, b, tok))
            if len(new_beams) == num_beams:
                break
        beam_scores = torch.tensor([s for s, _, _ in new_beams])
        sel = torch.tensor([b for _, b, _ in new_beams])
        input_ids = torch.cat([input_ids[sel], torch.tensor([[t] for _, _, t in new_beams])], dim=1)
        cache = reorder_cache(cache, sel)
        if hyps.is_done(beam_scores.max().item(), input_ids.shape[1]):
            break
        logprobs = step_fn(input_ids[:, -1:], input_ids.shape[1] - 1, cache)
    for s, b in zip(beam_scores.tolist(), input_ids.tolist()):
        hyps.add(b, s)
    return max(hyps.beams, key=lambda h: h[0])[1]


def main():
    torch.manual_seed(0)
    model = TinyLM().eval()
    step_fn = torch.compile(model)
    for prompt, beams in ((torch.tensor([[5, 7, 9]]), 3), (torch.tensor([[2, 4, 6, 8, 10]]), 2)):
        best = beam_search(step_fn, len(model.blocks), prompt, num_beams=beams)
        print("best hypothesis", best)


if __name__ == "__main__":
    main()
