import torch


def apply_repetition_penalty(logits, prev_tokens, penalty):
    if penalty == 1.0 or not prev_tokens:
        return logits
    idx = torch.tensor(prev_tokens, dtype=torch.long)
    picked = logits.gather(-1, idx)
    picked = torch.where(picked > 0, picked / penalty, picked * penalty)
    return logits.scatter(-1, idx, picked)


def top_p_filter(logits, top_p):
    sorted_logits, sorted_idx = logits.sort(descending=True)
    cum = sorted_logits.softmax(-1).cumsum(-1)
    remove = cum - sorted_logits.softmax(-1) > top_p
    sorted_logits = sorted_logits.masked_fill(remove, float("-inf"))
    return torch.empty_like(logits).scatter(-1, sorted_idx, sorted_logits)


@torch.compile
def sample_next(logits, prev_tokens, temperature=1.0, top_p=None, penalty=1.0):
    logits = apply_repetition_penalty(logits, prev_tokens, penalty)
    logits = logits / max(temperature, 1e-5)
    if top_p is not None:
        logits = top_p_filter(logits, top_p)
    probs = logits.softmax(-1)
    return torch.multinomial(probs, 1)
