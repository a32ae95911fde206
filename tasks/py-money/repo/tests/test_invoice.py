import unittest

from shop.invoice import invoice_line


class InvoiceTest(unittest.TestCase):
    def test_line(self):
        self.assertEqual(invoice_line("pen", 3, 150), "pen x3: $4.50")


if __name__ == "__main__":
    unittest.main()
