import torch

from .modules import Generator, GeneratorConfig


def chunk_mel(mel, chunk_frames, overlap):
    """Split a long utterance into overlapping chunks, like a streaming TTS server does."""
    step = chunk_frames - overlap
    chunks = []
    start = 0
    while start < mel.size(-1):
        chunks.append(mel[..., start:start + chunk_frames])
        start += step
    return chunks


def main():
    torch.manual_seed(0)
    cfg = GeneratorConfig()
    gen = Generator(cfg).eval()
    gen.compile()
    utterances = [torch.randn(2, cfg.n_mels, n) for n in (40, 64, 52)]
    total = 0
    with torch.no_grad():
        for mel in utterances:
            wav = gen(mel)
            assert wav.shape[-1] == mel.shape[-1] * gen.hop
            total += wav.shape[-1]
        # streaming synthesis on the last one
        pieces = [gen(c) for c in chunk_mel(utterances[-1], 24, 4) if c.size(-1) >= 8]
    return total, len(pieces)
