# Stage 'design'. Rules append their final products to design_targets().


def design_targets():
    return []
