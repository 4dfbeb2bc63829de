from typing import List, Optional, Tuple

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def compute_mask_indices(
    shape: Tuple[int, int],
    padding_mask: Optional[torch.Tensor],
    mask_prob: float,
    mask_length: int,
    mask_type: str = "static",
    mask_other: float = 0.0,
    min_masks: int = 0,
    no_overlap: bool = False,
) -> np.ndarray:
    bsz, all_sz = shape
    mask = np.full((bsz, all_sz), False)

    all_num_mask = int(mask_prob * all_sz / float(mask_length) + np.random.rand())
    all_num_mask = max(min_masks, all_num_mask)

    mask_idcs = []
    for i in range(bsz):
        if padding_mask is not None:
            sz = all_sz - padding_mask[i].long().sum().item()
            num_mask = int(mask_prob * sz / float(mask_length) + np.random.rand())
            num_mask = max(min_masks, num_mask)
        else:
            sz = all_sz
            num_mask = all_num_mask

        if mask_type == "static":
            lengths = np.full(num_mask, mask_length)
        elif mask_type == "uniform":
            lengths = np.random.randint(mask_other, mask_length * 2 + 1, size=num_mask)
        else:
            raise Exception("unknown mask selection " + mask_type)

        if sum(lengths) == 0:
            lengths[0] = min(mask_length, sz - 1)

        min_len = min(lengths)
        if sz - min_len <= num_mask:
            min_len = sz - num_mask - 1
        mask_idc = np.random.choice(sz - min_len, num_mask, replace=False)
        mask_idc = np.asarray([mask_idc[j] + offset for j in range(len(mask_idc)) for offset in range(lengths[j])])
        mask_idcs.append(np.unique(mask_idc[mask_idc < sz]))

    min_len = min([len(m) for m in mask_idcs])
    for i, mask_idc in enumerate(mask_idcs):
        if len(mask_idc) > min_len:
            mask_idc = np.random.choice(mask_idc, min_len, replace=False)
        mask[i, mask_idc] = True
    return mask


class Fp32GroupNorm(nn.GroupNorm):
    def forward(self, input):
        output = F.group_norm(input.float(), self.num_groups, self.weight.float() if self.weight is not None else None,
                              self.bias.float() if self.bias is not None else None, self.eps)
        return output.type_as(input)


class ConvFeatureExtractionModel(nn.Module):
    def __init__(self, conv_layers: List[Tuple[int, int, int]], dropout: float = 0.0, mode: str = "default", conv_bias: bool = False):
        super().__init__()

        def block(n_in, n_out, k, stride, is_group_norm=False):
            def make_conv():
                conv = nn.Conv1d(n_in, n_out, k, stride=stride, bias=conv_bias)
                nn.init.kaiming_normal_(conv.weight)
                return conv

            if is_group_norm:
                return nn.Sequential(make_conv(), nn.Dropout(p=dropout), Fp32GroupNorm(n_out, n_out, affine=True), nn.GELU())
            return nn.Sequential(make_conv(), nn.Dropout(p=dropout), nn.GELU())

        in_d = 1
        self.conv_layers = nn.ModuleList()
        for i, cl in enumerate(conv_layers):
            (dim, k, stride) = cl
            self.conv_layers.append(block(in_d, dim, k, stride, is_group_norm=mode == "default" and i == 0))
            in_d = dim

    def forward(self, x):
        x = x.unsqueeze(1)
        for conv in self.conv_layers:
            x = conv(x)
        return x


class Wav2Vec2Model(nn.Module):
    def __init__(self, conv_feature_layers=((32, 10, 5), (32, 3, 2), (32, 2, 2)), encoder_dim=48,
                 mask_prob=0.3, mask_length=3, feature_grad_mult=0.1):
        super().__init__()
        self.conv_feature_layers = list(conv_feature_layers)
        self.feature_extractor = ConvFeatureExtractionModel(self.conv_feature_layers)
        self.layer_norm = nn.LayerNorm(conv_feature_layers[-1][0])
        self.post_extract_proj = nn.Linear(conv_feature_layers[-1][0], encoder_dim)
        self.mask_prob = mask_prob
        self.mask_length = mask_length
        self.feature_grad_mult = feature_grad_mult
        self.mask_emb = nn.Parameter(torch.FloatTensor(encoder_dim).uniform_())
        self.encoder = nn.Sequential(nn.Linear(encoder_dim, encoder_dim), nn.GELU(), nn.Linear(encoder_dim, encoder_dim))

    def _get_feat_extract_output_lengths(self, input_lengths: torch.LongTensor):
        def _conv_out_length(input_length, kernel_size, stride):
            return torch.floor((input_length - kernel_size) / stride + 1)

        for i in range(len(self.conv_feature_layers)):
            input_lengths = _conv_out_length(input_lengths, self.conv_feature_layers[i][1], self.conv_feature_layers[i][2])
        return input_lengths.to(torch.long)

    def apply_mask(self, x, padding_mask):
        B, T, C = x.shape
        if self.mask_prob > 0:
            mask_indices = compute_mask_indices((B, T), padding_mask, self.mask_prob, self.mask_length, min_masks=2)
            mask_indices = torch.from_numpy(mask_indices).to(x.device)
            x = x.clone()
            x[mask_indices] = self.mask_emb
        else:
            mask_indices = None
        return x, mask_indices

    def forward(self, source, padding_mask=None, mask=True):
        if self.feature_grad_mult > 0:
            features = self.feature_extractor(source)
            if self.feature_grad_mult != 1.0:
                features = GradMultiply.apply(features, self.feature_grad_mult)
        else:
            with torch.no_grad():
                features = self.feature_extractor(source)

        features = features.transpose(1, 2)
        features = self.layer_norm(features)

        if padding_mask is not None and padding_mask.any():
            input_lengths = (1 - padding_mask.long()).sum(-1)
            output_lengths = self._get_feat_extract_output_lengths(input_lengths)
            padding_mask = torch.zeros(features.shape[:2], dtype=features.dtype, device=features.device)
            padding_mask[(torch.arange(padding_mask.shape[0], device=padding_mask.device), output_lengths - 1)] = 1
            padding_mask = (1 - padding_mask.flip([-1]).cumsum(-1).flip([-1])).bool()
        else:
            padding_mask = None

        features = self.post_extract_proj(features)
        if mask:
            x, mask_indices = self.apply_mask(features, padding_mask)
        else:
            x, mask_indices = features, None
        x = self.encoder(x)
        return {"x": x, "padding_mask": padding_mask, "mask_indices": mask_indices}


class GradMultiply(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.scale = scale
        return x.new(x)

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.scale, None


def main():
    torch.manual_seed(0)
    np.random.seed(0)
    model = Wav2Vec2Model()
    compiled = torch.compile(model)
    wav = torch.randn(2, 1600)
    pad = torch.zeros(2, 1600, dtype=torch.bool)
    pad[1, 1200:] = True
    out = compiled(wav, padding_mask=pad, mask=True)
    out["x"].sum().backward()
    out = compiled(torch.randn(2, 1600), padding_mask=torch.zeros(2, 1600, dtype=torch.bool), mask=True)
    model.eval()
    with torch.no_grad():
        out = compiled(torch.randn(3, 2000), mask=False)
    return out


if __name__ == "__main__":
    main()
