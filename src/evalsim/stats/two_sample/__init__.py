"""Two policies compared: Fisher's exact test, the exact unconditional tests (Boschloo,
Barnard), exact power and sample size, paired (McNemar) analyses and study design."""
