"""Toy models of the real HF families trained on the toy world (``train``), their configs and tokenizer
(``build``), held-out checks (``evaluate``) and model card (``card``); checkpoints ship in ``checkpoints/``."""
