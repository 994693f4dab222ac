# Stage 'fisher'. Rules append their final products to fisher_targets().


def fisher_targets():
    return []
