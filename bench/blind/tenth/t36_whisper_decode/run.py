import torch

from .decoding import DecodingOptions, GreedyDecoder, TextDecoder
from .filters import ApplyTimestampRules, SuppressBlank, SuppressTokens, Tokenizer


class DecodingTask:
    def __init__(self, model, tokenizer, options: DecodingOptions):
        self.model = model
        self.tokenizer = tokenizer
        self.options = options
        self.initial_tokens = tokenizer.sot_sequence + (() if not options.without_timestamps else (tokenizer.no_timestamps,))
        self.sample_begin = len(self.initial_tokens)
        self.decoder = GreedyDecoder(options.temperature, tokenizer.eot)
        self.logit_filters = []
        if options.suppress_blank:
            self.logit_filters.append(SuppressBlank(tokenizer, self.sample_begin))
        self.logit_filters.append(SuppressTokens(tokenizer.non_speech_tokens))
        if not options.without_timestamps:
            max_idx = None if options.max_initial_timestamp is None else round(options.max_initial_timestamp / 0.02)
            self.logit_filters.append(ApplyTimestampRules(tokenizer, self.sample_begin, max_idx))
        self.step = torch.compile(self._step)

    def _step(self, tokens, audio_features, kv_cache, sum_logprobs):
        x = tokens if not kv_cache else tokens[:, -1:]
        logits = self.model(x, audio_features, kv_cache)[:, -1]
        for logit_filter in self.logit_filters:
            logit_filter.apply(logits, tokens)
        return self.decoder.update(tokens, logits, sum_logprobs)

    @torch.no_grad()
    def run(self, audio_features):
        n = audio_features.shape[0]
        tokens = torch.tensor([self.initial_tokens]).repeat(n, 1)
        sum_logprobs = torch.zeros(n)
        kv_cache = {}
        for _ in range(self.options.sample_len):
            tokens, completed = self.step(tokens, audio_features, kv_cache, sum_logprobs)
            if completed:
                break
        return tokens, sum_logprobs


def main():
    torch.manual_seed(0)
    model = TextDecoder().eval()
    tok = Tokenizer()
    audio = torch.randn(2, 10, 16)
    for opts in (DecodingOptions(), DecodingOptions(without_timestamps=True, temperature=0.5)):
        tokens, scores = DecodingTask(model, tok, opts).run(audio)
        assert tokens.shape[0] == 2
