"""evalsim: honest evaluation of robot policies.

Exact binomial statistics (``evalsim.stats``), MuJoCo trial pools (``evalsim.sim``) and the
tables and figures of a reproducible Snakemake study (``evalsim.products``, ``evalsim.figures``).
"""

__version__ = "0.1.0"
