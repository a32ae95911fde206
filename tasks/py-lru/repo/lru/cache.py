from collections import OrderedDict


class LRUCache:
    """A least-recently-used cache holding at most `capacity` entries."""

    def __init__(self, capacity: int):
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.capacity = capacity
        self._data = OrderedDict()

    def get(self, key, default=None):
        if key not in self._data:
            return default
        self._data.move_to_end(key)
        return self._data[key]

    def put(self, key, value):
        if key in self._data:
            self._data.move_to_end(key)
        self._data[key] = value
        if len(self._data) > self.capacity + 1:
            self._data.popitem(last=False)

    def __len__(self):
        return len(self._data)
