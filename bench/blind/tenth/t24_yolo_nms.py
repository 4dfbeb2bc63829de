"""YOLO-style non_max_suppression: confidence filtering, class offsets and greedy NMS per image."""
import torch


def xywh2xyxy(x):
    y = x.clone()
    y[..., 0] = x[..., 0] - x[..., 2] / 2
    y[..., 1] = x[..., 1] - x[..., 3] / 2
    y[..., 2] = x[..., 0] + x[..., 2] / 2
    y[..., 3] = x[..., 1] + x[..., 3] / 2
    return y


def box_iou(box1, box2):
    area1 = (box1[:, 2] - box1[:, 0]) * (box1[:, 3] - box1[:, 1])
    area2 = (box2[:, 2] - box2[:, 0]) * (box2[:, 3] - box2[:, 1])
    lt = torch.max(box1[:, None, :2], box2[:, :2])
    rb = torch.min(box1[:, None, 2:], box2[:, 2:])
    inter = (rb - lt).clamp(min=0).prod(2)
    return inter / (area1[:, None] + area2 - inter)


def greedy_nms(boxes, scores, iou_thres):
    order = scores.argsort(descending=True)
    keep = []
    while order.numel() > 0:
        i = order[0]
        keep.append(i)
        if order.numel() == 1:
            break
        ious = box_iou(boxes[i][None], boxes[order[1:]])[0]
        order = order[1:][ious <= iou_thres]
    return torch.stack(keep)


def non_max_suppression(prediction, conf_thres=0.25, iou_thres=0.45, classes=None, max_det=300, max_wh=4096):
    nc = prediction.shape[2] - 5
    xc = prediction[..., 4] > conf_thres
    output = [torch.zeros((0, 6))] * prediction.shape[0]
    for xi, x in enumerate(prediction):
        x = x[xc[xi]]
        if not x.shape[0]:
            continue
        x[:, 5:] *= x[:, 4:5]
        box = xywh2xyxy(x[:, :4])
        conf, j = x[:, 5:].max(1, keepdim=True)
        x = torch.cat((box, conf, j.float()), 1)[conf.view(-1) > conf_thres]
        if classes is not None:
            x = x[(x[:, 5:6] == torch.tensor(classes)).any(1)]
        c = x[:, 5:6] * max_wh
        i = greedy_nms(x[:, :4] + c, x[:, 4], iou_thres)
        output[xi] = x[i[:max_det]]
    return output


def fake_head_output(batch, anchors=120, nc=4):
    xy = torch.rand(batch, anchors, 2) * 320
    wh = torch.rand(batch, anchors, 2) * 60 + 4
    obj = torch.rand(batch, anchors, 1)
    cls = torch.rand(batch, anchors, nc)
    return torch.cat([xy, wh, obj, cls], -1)


def main():
    torch.manual_seed(0)
    nms = torch.compile(non_max_suppression)
    for batch, conf, classes in [(2, 0.25, None), (2, 0.4, None), (1, 0.25, [0, 2])]:
        dets = nms(fake_head_output(batch), conf_thres=conf, classes=classes)
        assert len(dets) == batch and all(d.shape[-1] == 6 for d in dets)


if __name__ == "__main__":
    main()
