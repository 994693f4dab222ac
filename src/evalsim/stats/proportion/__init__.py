"""One binomial proportion: the pmf and tails, confidence intervals (a registry of
methods), their exact coverage, and the trials a target width needs."""
