"""RNN-Transducer greedy decoding (NeMo-style): prediction network state, joint network, max symbols per frame."""
import torch
import torch.nn as nn


class PredictionNetwork(nn.Module):
    def __init__(self, vocab=16, dim=32, blank=0):
        super().__init__()
        self.blank = blank
        self.embed = nn.Embedding(vocab, dim)
        self.rnn = nn.LSTMCell(dim, dim)

    def initial_state(self, batch):
        return torch.zeros(batch, self.rnn.hidden_size), torch.zeros(batch, self.rnn.hidden_size)

    def forward(self, label, state):
        emb = self.embed(label)
        h, c = self.rnn(emb, state)
        return h, (h, c)


class JointNetwork(nn.Module):
    def __init__(self, enc_dim=24, pred_dim=32, joint_dim=32, vocab=16):
        super().__init__()
        self.enc = nn.Linear(enc_dim, joint_dim)
        self.pred = nn.Linear(pred_dim, joint_dim)
        self.out = nn.Linear(joint_dim, vocab)

    def forward(self, f, g):
        return self.out(torch.tanh(self.enc(f) + self.pred(g))).log_softmax(-1)


class GreedyRNNTDecoder:
    def __init__(self, predictor, joint, max_symbols_per_step=3):
        self.predictor = predictor
        self.joint = joint
        self.max_symbols = max_symbols_per_step
        self.blank = predictor.blank

    def step(self, f_t, last_label, state):
        g, new_state = self.predictor(last_label, state)
        logp = self.joint(f_t, g)
        return logp.argmax(-1), new_state

    @torch.no_grad()
    def __call__(self, enc_out, enc_len):
        hyp, state = [], self.predictor.initial_state(1)
        last = torch.full((1,), self.blank, dtype=torch.long)
        for t in range(int(enc_len)):
            f_t = enc_out[t:t + 1]
            symbols_added = 0
            not_blank = True
            while not_blank and symbols_added < self.max_symbols:
                k, new_state = self.step(f_t, last, state)
                if k.item() == self.blank:
                    not_blank = False
                else:
                    hyp.append(int(k))
                    last, state = k, new_state
                    symbols_added += 1
        return hyp


def main():
    torch.manual_seed(0)
    decoder = GreedyRNNTDecoder(PredictionNetwork().eval(), JointNetwork().eval())
    decoder.step = torch.compile(decoder.step)
    decode = torch.compile(decoder.__call__)
    for _ in range(3):
        enc = torch.randn(8, 24)
        hyp = decode(enc, torch.tensor(8))
        assert all(0 < tok < 16 for tok in hyp)


if __name__ == "__main__":
    main()
