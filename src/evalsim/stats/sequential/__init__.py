"""Sequential comparisons with certified error rates: the shared records and spending
functions (:mod:`.core`), unpaired designs and the checks of any design (:mod:`.designs`),
paired designs (:mod:`.paired`), the design optimiser (:mod:`.optimise`), design files
(:mod:`.io`) and the false wins of peeking (:mod:`.peeking`); kernels in ``_kernels``,
``_paired_kernels`` and ``_peeking_kernels``. The boundary families are the registry
:mod:`evalsim.stats.boundaries`.

The package re-exports nothing: import each name from its module (importing the package
loads no kernel).
"""
