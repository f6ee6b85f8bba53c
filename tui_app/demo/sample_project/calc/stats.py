"""Summary statistics over sequences of numbers."""


def total(values):
    """The sum of the values."""
    result = 0
    for value in values:
        result += value
    return result


def mean(values):
    """The arithmetic mean; an empty sequence has no mean."""
    if not values:
        raise ValueError("mean of an empty sequence")
    return total(values) / len(values)


def median(values):
    """The middle value (the mean of the two middle values for an even count)."""
    if not values:
        raise ValueError("median of an empty sequence")
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return ordered[middle]
