"""Energy-based voice activity detection that trims leading/trailing silence before encoding."""
import torch
import torch.nn as nn


def frame_energy(wav, frame=80, hop=40):
    frames = wav.unfold(-1, frame, hop)
    return 10 * torch.log10(frames.pow(2).mean(-1) + 1e-10)


def trim_silence(wav, threshold_db=-30.0, frame=80, hop=40):
    energy = frame_energy(wav, frame, hop)
    start, end = 0, energy.shape[0] - 1
    while start < end and energy[start] < threshold_db:
        start += 1
    while end > start and energy[end] < threshold_db:
        end -= 1
    print(f"kept frames {start}..{end} of {energy.shape[0]}")
    return wav[start * hop: end * hop + frame]


class SpeakerEncoder(nn.Module):
    def __init__(self, hidden=16):
        super().__init__()
        self.conv = nn.Conv1d(1, hidden, 80, stride=40)
        self.proj = nn.Linear(hidden, 8)

    def forward(self, wav):
        h = torch.relu(self.conv(wav[None, None]))
        return nn.functional.normalize(self.proj(h.mean(-1)), dim=-1)


def main():
    torch.manual_seed(0)
    trim = torch.compile(trim_silence)
    encoder = torch.compile(SpeakerEncoder().eval())
    embeddings = []
    for n_sil, n_speech in [(400, 1600), (200, 1600), (800, 1200)]:
        wav = torch.cat([0.001 * torch.randn(n_sil), torch.randn(n_speech), 0.001 * torch.randn(n_sil)])
        with torch.no_grad():
            embeddings.append(encoder(trim(wav)))
    print(torch.cat(embeddings) @ torch.cat(embeddings).T)


if __name__ == "__main__":
    main()
