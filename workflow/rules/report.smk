# Stage 'report'. Rules append their final products to report_targets().


def report_targets():
    return []
