"""Simulated microphone stream: fixed-size chunks, a ragged final chunk, greedy CTC decoding."""
from __future__ import annotations

from typing import Iterator, List

import torch

from .encoder import ChunkEncoder, encode_chunk

CHUNK_FRAMES = 12


def stream_chunks(utterance: torch.Tensor, chunk: int = CHUNK_FRAMES) -> Iterator[torch.Tensor]:
    for start in range(0, utterance.shape[1], chunk):
        yield utterance[:, start:start + chunk]


def ctc_greedy(logp: torch.Tensor, prev: int) -> List[int]:
    ids = logp.argmax(-1)[0].tolist()
    out = []
    for i in ids:
        if i != prev and i != 0:
            out.append(i)
        prev = i
    return out


def transcribe(model: ChunkEncoder, utterance: torch.Tensor) -> List[int]:
    state = None
    tokens: List[int] = []
    chunks = list(stream_chunks(utterance))
    for idx, chunk in enumerate(chunks):
        last = idx == len(chunks) - 1
        logp, state = encode_chunk(model, chunk, state, is_final=last)
        tokens.extend(ctc_greedy(logp, tokens[-1] if tokens else 0))
    return tokens


def main() -> None:
    torch.manual_seed(0)
    model = ChunkEncoder().eval()
    with torch.inference_mode():
        for n_frames in (50, 41):
            utt = torch.randn(1, n_frames, 20)
            print(n_frames, transcribe(model, utt)[:10])


if __name__ == "__main__":
    main()
