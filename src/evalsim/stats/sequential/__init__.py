"""Sequential comparisons with certified error rates: the shared records and spending
functions (:mod:`.core`), unpaired designs and the checks of any design (:mod:`.designs`),
paired designs (:mod:`.paired`), the design optimiser (:mod:`.optimise`), design files
(:mod:`.io`) and the false wins of peeking (exact in :mod:`.peeking`, simulated in
:mod:`.peeking_simulation`); kernels in ``_kernels``, ``_paired_kernels`` and
``_peeking_kernels``. The boundary families are the registry :mod:`evalsim.stats.boundaries`.

The package re-exports what ``evalsim.stats.sequential`` held before it became a package.
"""

from evalsim.stats.boundaries import (
    BOUNDARY_FAMILIES,
    SPENDING_FAMILIES,
)
from evalsim.stats.sequential.core import (
    ALTERNATIVES,
    ROUNDING_ALLOWANCE,
    UNPAIRED_N_MAX,
    VERDICTS,
    Certificate,
    OperatingCharacteristics,
    SequentialDesign,
    spending,
)
from evalsim.stats.sequential.designs import (
    UNPAIRED_BUILDERS,
    certify_type1,
    operating_characteristics,
    type1_curve,
    unpaired_design,
    unpaired_family_design,
    unpaired_shape_design,
)

__all__ = [
    "ALTERNATIVES",
    "BOUNDARY_FAMILIES",
    "Certificate",
    "OperatingCharacteristics",
    "ROUNDING_ALLOWANCE",
    "SPENDING_FAMILIES",
    "SequentialDesign",
    "UNPAIRED_BUILDERS",
    "UNPAIRED_N_MAX",
    "VERDICTS",
    "certify_type1",
    "operating_characteristics",
    "spending",
    "type1_curve",
    "unpaired_design",
    "unpaired_family_design",
    "unpaired_shape_design",
]
