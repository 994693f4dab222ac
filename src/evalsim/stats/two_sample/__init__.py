"""Two policies compared: the unpaired tests of the registry
:data:`evalsim.stats.names.TWO_SAMPLE_TESTS` (Fisher's exact test and the exact unconditional
tests), exact power and sample size, paired (McNemar) analyses and study design (unpaired
and paired)."""
