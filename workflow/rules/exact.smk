# Stage 'exact'. Rules append their final products to exact_targets().


def exact_targets():
    return []
