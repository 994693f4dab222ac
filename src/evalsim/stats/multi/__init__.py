"""Many tasks, policies and seeds: per-task tests with multiplicity corrections
(:mod:`.tasks`), aggregate and stratified tests (:mod:`.aggregate`), paired tasks
(:mod:`.paired`), rankings (:mod:`.rank`), training seeds (:mod:`.seeds`) and the seed
hierarchy (:mod:`.hierarchy`); kernels in ``_kernels`` and ``_hierarchy_kernels``.

The package re-exports :mod:`.tasks`, what ``evalsim.stats.multi`` held before it became a
package.
"""

from evalsim.stats.multi.tasks import (
    ADJUST_METHODS,
    CORRECTIONS,
    R_REL_TOL,
    CMHResult,
    Correction,
    ExactStratifiedResult,
    TaskComparison,
    adjust_pvalues,
    cmh_test,
    exact_stratified_test,
    per_task_tests,
)

__all__ = [
    "ADJUST_METHODS",
    "CMHResult",
    "CORRECTIONS",
    "Correction",
    "ExactStratifiedResult",
    "R_REL_TOL",
    "TaskComparison",
    "adjust_pvalues",
    "cmh_test",
    "exact_stratified_test",
    "per_task_tests",
]
