"""Choosing one of K checkpoints: fixed-n selection (exact PCS, the winner's curse, the n
per checkpoint) in :mod:`.fixed_n`, K-arm paired tests (Cochran's Q, pairwise McNemar with
Holm) and checkpoint ladders in :mod:`.ksample`, sequential elimination with a certified
error in :mod:`.elimination`; kernels in ``_kernels``."""
