import unittest

from slugify import slugify


class SlugTest(unittest.TestCase):
    def test_lowercase(self):
        self.assertEqual(slugify("ABC"), "abc")

    def test_trim(self):
        self.assertEqual(slugify("  hi  "), "hi")


if __name__ == "__main__":
    unittest.main()
