import unittest

from shop.report import report_total


class ReportTest(unittest.TestCase):
    def test_total(self):
        self.assertEqual(report_total([1000, 200]), "Total: $12.00")


if __name__ == "__main__":
    unittest.main()
