"""Speech-style conformer frontend that logs, warns and validates inputs inside forward."""
import logging
import warnings

import torch
import torch.nn as nn

logger = logging.getLogger("asr.frontend")
logger.addHandler(logging.NullHandler())


class Conv2dSubsampling(nn.Module):
    def __init__(self, idim=40, odim=32):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(1, odim, 3, 2), nn.ReLU(), nn.Conv2d(odim, odim, 3, 2), nn.ReLU())
        self.out = nn.Linear(odim * (((idim - 1) // 2 - 1) // 2), odim)

    def forward(self, x, x_lens):
        x = self.conv(x.unsqueeze(1))
        b, c, t, f = x.size()
        x = self.out(x.transpose(1, 2).contiguous().view(b, t, c * f))
        x_lens = ((x_lens - 1) // 2 - 1) // 2
        return x, x_lens


class Frontend(nn.Module):
    def __init__(self, idim=40, odim=32, max_frames=400, verbose=True):
        super().__init__()
        self.max_frames = max_frames
        self.verbose = verbose
        self.global_mean = nn.Parameter(torch.zeros(idim), requires_grad=False)
        self.global_std = nn.Parameter(torch.ones(idim), requires_grad=False)
        self.subsample = Conv2dSubsampling(idim, odim)

    def forward(self, feats, feats_lens):
        if feats.size(1) > self.max_frames:
            logger.warning("utterance of %d frames truncated to %d", feats.size(1), self.max_frames)
            feats = feats[:, : self.max_frames]
            feats_lens = feats_lens.clamp(max=self.max_frames)
        if torch.isnan(feats).any():
            warnings.warn("NaN found in input features; zeroing them")
            feats = torch.nan_to_num(feats)
        feats = (feats - self.global_mean) / self.global_std
        out, out_lens = self.subsample(feats, feats_lens)
        if self.verbose:
            print(f"frontend: {tuple(feats.shape)} -> {tuple(out.shape)}")
        return out, out_lens


class CTCHead(nn.Module):
    def __init__(self, odim=32, vocab=30):
        super().__init__()
        self.frontend = Frontend(odim=odim)
        self.lstm_free_proj = nn.Sequential(nn.Linear(odim, odim), nn.GELU(), nn.Linear(odim, vocab))

    def forward(self, feats, feats_lens):
        enc, enc_lens = self.frontend(feats, feats_lens)
        return self.lstm_free_proj(enc).log_softmax(-1), enc_lens


def main():
    torch.manual_seed(0)
    model = CTCHead().eval()
    compiled = torch.compile(model)
    with torch.no_grad():
        for _ in range(3):
            feats = torch.randn(2, 450, 40)
            lens = torch.tensor([450, 430])
            logp, out_lens = compiled(feats, lens)


if __name__ == "__main__":
    main()
