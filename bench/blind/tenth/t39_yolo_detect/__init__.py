"""ultralytics-style anchor-free Detect head: DFL, lazily rebuilt anchors/strides, train vs inference outputs."""
