import unittest

from lru import LRUCache


class CacheTest(unittest.TestCase):
    def test_get_missing_returns_default(self):
        cache = LRUCache(2)
        self.assertIsNone(cache.get("x"))
        self.assertEqual(cache.get("x", 7), 7)

    def test_put_overwrites(self):
        cache = LRUCache(2)
        cache.put("a", 1)
        cache.put("a", 2)
        self.assertEqual(cache.get("a"), 2)
        self.assertEqual(len(cache), 1)


if __name__ == "__main__":
    unittest.main()
