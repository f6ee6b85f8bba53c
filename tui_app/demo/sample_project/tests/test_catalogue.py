"""A catalogue of small cases: every one of them passes, and there are many (a verbose run is long)."""

import unittest

from calc import mean, total


class TotalCatalogue(unittest.TestCase):
    pass


def _make_case(n):
    values = list(range(1, n + 1))

    def case(self):
        self.assertEqual(total(values), n * (n + 1) // 2)
        self.assertEqual(mean(values), (n + 1) / 2)

    return case


for _n in range(1, 401):
    setattr(TotalCatalogue, f"test_sum_of_first_{_n:03d}_numbers", _make_case(_n))
