"""mmcv/mmdet-style registry-built backbone + FPN neck from config dicts (kept compile-clean)."""
