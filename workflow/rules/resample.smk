# Stage 'resample'. Rules append their final products to resample_targets().


def resample_targets():
    return []
