# Stage 'simulate'. Rules append their final products to simulate_targets().


def simulate_targets():
    return []
