"""Global training configuration (a yacs/absl-flags-like module that the script mutates)."""
NUM_CLASSES = 3
IGNORE_INDEX = 255
AUX_LOSS_WEIGHT = 0.4
DICE_SMOOTH = 1.0
USE_DICE = False
