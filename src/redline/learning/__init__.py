"""Learning from feedback: preference pairs and the reward models trained on them."""
