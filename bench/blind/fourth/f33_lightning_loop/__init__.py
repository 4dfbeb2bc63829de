"""A miniature LightningModule / Trainer pair."""
