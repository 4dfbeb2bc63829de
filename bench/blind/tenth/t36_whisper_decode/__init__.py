"""whisper-style greedy decoding: text decoder with kv cache dict, logit filters and timestamp rules."""
