"""Energy-based voice activity detection returning speech segments in seconds."""
import torch
import torch.nn.functional as F

SAMPLE_RATE = 8000


def frame_energy_db(wav, frame_len, hop):
    frames = wav.unfold(-1, frame_len, hop)
    energy = frames.pow(2).mean(-1)
    return 10 * torch.log10(energy + 1e-10)


@torch.compile(backend="eager")
def detect_speech(wav, frame_len=200, hop=80, threshold_db=-30.0, min_frames=3):
    db = frame_energy_db(wav, frame_len, hop)
    if db.max() < threshold_db:
        return []
    active = (db > threshold_db).float()
    active = F.max_pool1d(active[None, None], kernel_size=5, stride=1, padding=2)[0, 0]
    diff = torch.diff(F.pad(active, (1, 1)))
    starts = torch.nonzero(diff > 0).flatten()
    ends = torch.nonzero(diff < 0).flatten()
    segments = []
    for s, e in zip(starts.tolist(), ends.tolist()):
        if e - s >= min_frames:
            segments.append((s * hop / SAMPLE_RATE, (e * hop + frame_len) / SAMPLE_RATE))
    return segments


def synth(n, bursts):
    wav = torch.randn(n) * 0.001
    for a, b in bursts:
        wav[a:b] += torch.randn(b - a) * 0.3
    return wav


def main():
    torch.manual_seed(0)
    print(detect_speech(synth(8000, [(1000, 3000), (5000, 6500)])))
    print(detect_speech(synth(12000, [(2000, 2600)]), threshold_db=-25.0))
    print(detect_speech(synth(8000, [])))
