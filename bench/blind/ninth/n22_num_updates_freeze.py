"""fairseq wav2vec2-finetuning style: encoder frozen for the first N updates, via set_num_updates()."""
import random

import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvFeatureExtractor(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv1d(1, dim, 10, 5), nn.GELU(), nn.Conv1d(dim, dim, 3, 2), nn.GELU())

    def forward(self, wav):
        return self.conv(wav.unsqueeze(1)).transpose(1, 2)


class Wav2VecCtc(nn.Module):
    def __init__(self, dim=16, vocab=12, freeze_finetune_updates=4, final_dropout=0.1):
        super().__init__()
        self.feature_extractor = ConvFeatureExtractor(dim)
        self.encoder = nn.TransformerEncoder(
            nn.TransformerEncoderLayer(dim, 2, 32, dropout=0.0, batch_first=True), num_layers=1)
        self.final_dropout = nn.Dropout(final_dropout)
        self.proj = nn.Linear(dim, vocab)
        self.freeze_finetune_updates = freeze_finetune_updates
        self.num_updates = 0

    def set_num_updates(self, num_updates):
        """Set the number of parameters updates (called by the trainer after every step)."""
        self.num_updates = num_updates

    def forward(self, source):
        ft = self.freeze_finetune_updates <= self.num_updates
        with torch.set_grad_enabled(ft and self.training):
            features = self.feature_extractor(source)
            x = self.encoder(features)
        x = self.final_dropout(x)
        return self.proj(x)


def main():
    torch.manual_seed(0)
    random.seed(0)
    model = Wav2VecCtc()
    cmodel = torch.compile(model)
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    ctc = nn.CTCLoss(blank=0, zero_infinity=True)
    for update in range(8):
        wav = torch.randn(2, 400)
        targets = torch.randint(1, 12, (2, 5))
        logits = cmodel(wav)
        logp = F.log_softmax(logits, dim=-1).transpose(0, 1)
        loss = ctc(logp, targets, torch.full((2,), logp.shape[0]), torch.full((2,), 5))
        opt.zero_grad()
        loss.backward()
        opt.step()
        model.set_num_updates(update + 1)
    return loss.item()


if __name__ == "__main__":
    print(main())
