import math

import numpy as np
import torch
import torch.nn.functional as F


class Tokenizer:
    def __init__(self, vocab_size=60):
        self.eot = 50
        self.sot = 51
        self.no_timestamps = 52
        self.timestamp_begin = 53
        self.vocab_size = vocab_size
        self.sot_sequence = (self.sot,)

    def encode(self, text):
        return [ord(c) % 40 for c in text]

    @property
    def non_speech_tokens(self):
        return tuple(sorted({1, 3, 5, 7}))


class LogitFilter:
    def apply(self, logits, tokens):
        raise NotImplementedError


class SuppressBlank(LogitFilter):
    def __init__(self, tokenizer, sample_begin):
        self.tokenizer = tokenizer
        self.sample_begin = sample_begin

    def apply(self, logits, tokens):
        if tokens.shape[1] == self.sample_begin:
            logits[:, self.tokenizer.encode(" ") + [self.tokenizer.eot]] = -np.inf


class SuppressTokens(LogitFilter):
    def __init__(self, suppress_tokens):
        self.suppress_tokens = list(suppress_tokens)

    def apply(self, logits, tokens):
        logits[:, self.suppress_tokens] = -np.inf


class ApplyTimestampRules(LogitFilter):
    def __init__(self, tokenizer, sample_begin, max_initial_timestamp_index=None):
        self.tokenizer = tokenizer
        self.sample_begin = sample_begin
        self.max_initial_timestamp_index = max_initial_timestamp_index

    def apply(self, logits, tokens):
        logits[:, self.tokenizer.no_timestamps] = -np.inf
        for k in range(tokens.shape[0]):
            sampled_tokens = tokens[k, self.sample_begin:]
            seq = [t for t in sampled_tokens.tolist()]
            last_was_timestamp = len(seq) >= 1 and seq[-1] >= self.tokenizer.timestamp_begin
            penultimate_was_timestamp = len(seq) < 2 or seq[-2] >= self.tokenizer.timestamp_begin
            if last_was_timestamp:
                if penultimate_was_timestamp:
                    logits[k, self.tokenizer.timestamp_begin:] = -np.inf
                else:
                    logits[k, : self.tokenizer.eot] = -np.inf
        if tokens.shape[1] == self.sample_begin:
            logits[:, : self.tokenizer.timestamp_begin] = -np.inf
            if self.max_initial_timestamp_index is not None:
                last_allowed = self.tokenizer.timestamp_begin + self.max_initial_timestamp_index
                logits[:, last_allowed + 1:] = -np.inf
        logprobs = F.log_softmax(logits.float(), dim=-1)
        for k in range(tokens.shape[0]):
            timestamp_logprob = logprobs[k, self.tokenizer.timestamp_begin:].logsumexp(dim=-1)
            max_text_token_logprob = logprobs[k, : self.tokenizer.timestamp_begin].max()
            if timestamp_logprob > max_text_token_logprob:
                logits[k, : self.tokenizer.timestamp_begin] = -np.inf
