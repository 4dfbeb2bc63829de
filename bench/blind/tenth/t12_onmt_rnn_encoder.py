"""OpenNMT-style RNN encoder: vocab dict, sequence_mask from lengths, packed sequences, bridge layer."""
import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

PAD, UNK, BOS, EOS = "<blank>", "<unk>", "<s>", "</s>"


class Vocab:
    def __init__(self, tokens):
        self.itos = [PAD, UNK, BOS, EOS] + sorted(set(tokens))
        self.stoi = {t: i for i, t in enumerate(self.itos)}

    def __len__(self):
        return len(self.itos)

    def numericalize(self, sents):
        ids = [[self.stoi.get(w, self.stoi[UNK]) for w in s.split()] for s in sents]
        lengths = torch.tensor([len(s) for s in ids])
        out = torch.full((len(ids), int(lengths.max())), self.stoi[PAD], dtype=torch.long)
        for i, s in enumerate(ids):
            out[i, : len(s)] = torch.tensor(s)
        return out, lengths


def sequence_mask(lengths, max_len=None):
    batch_size = lengths.numel()
    max_len = max_len or lengths.max()
    return torch.arange(0, max_len, device=lengths.device).type_as(lengths).repeat(batch_size, 1).lt(lengths.unsqueeze(1))


class RNNEncoder(nn.Module):
    def __init__(self, vocab, emb_size=16, hidden_size=32, bidirectional=True, use_bridge=True):
        super().__init__()
        self.padding_idx = vocab.stoi[PAD]
        self.embeddings = nn.Embedding(len(vocab), emb_size, padding_idx=self.padding_idx)
        num_directions = 2 if bidirectional else 1
        self.rnn = nn.LSTM(emb_size, hidden_size // num_directions, batch_first=True, bidirectional=bidirectional)
        self.use_bridge = use_bridge
        if use_bridge:
            self.bridge = nn.ModuleList([nn.Linear(hidden_size, hidden_size) for _ in range(2)])

    def _bridge(self, hidden):
        outs = []
        for layer, state in zip(self.bridge, hidden):
            size = state.size()
            outs.append(torch.relu(layer(state.view(-1, layer.in_features))).view(size))
        return tuple(outs)

    def forward(self, src, src_len=None):
        emb = self.embeddings(src)
        packed = emb
        if src_len is not None:
            packed = pack_padded_sequence(emb, src_len.view(-1).tolist(), batch_first=True, enforce_sorted=False)
        enc_out, enc_final = self.rnn(packed)
        if src_len is not None:
            enc_out = pad_packed_sequence(enc_out, batch_first=True)[0]
        h, c = enc_final
        enc_final = (torch.cat([h[0::2], h[1::2]], 2), torch.cat([c[0::2], c[1::2]], 2))
        if self.use_bridge:
            enc_final = self._bridge(enc_final)
        return enc_out, enc_final, src_len


class GlobalAttentionPool(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.score = nn.Linear(dim, 1)

    def forward(self, memory_bank, memory_lengths):
        align = self.score(memory_bank).squeeze(-1)
        mask = sequence_mask(memory_lengths, max_len=align.size(-1))
        align = align.masked_fill(~mask, -float("inf"))
        return (align.softmax(-1).unsqueeze(-1) * memory_bank).sum(1)


def main():
    torch.manual_seed(0)
    corpus = ["the cat sat on the mat", "a dog ran", "birds fly south in winter", "hello world"]
    vocab = Vocab(" ".join(corpus).split())
    encoder = torch.compile(RNNEncoder(vocab))
    pool = torch.compile(GlobalAttentionPool(32))
    for batch in (corpus[:2], corpus[2:], corpus[:3]):
        src, lengths = vocab.numericalize(batch)
        out, (h, c), lengths = encoder(src, lengths)
        summary = pool(out, lengths)
        assert summary.shape == (len(batch), 32)
    out, _, _ = encoder(src)


if __name__ == "__main__":
    main()
