"""The lesson's experiment replayed from pools: evaluations drawn from simulated trials."""
