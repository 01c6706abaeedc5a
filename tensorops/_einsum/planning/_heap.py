"""The heap functions of the path planners: ``heapq`` eagerly, plain Python where Dynamo traces.

Dynamo cannot trace the C functions of ``heapq``, and the planners run traced where
tensorops' own Python is traced (the compile fallback, or a planner called in a
compiled function). `heap_functions` gives the C module eagerly and `PythonHeap`,
which pops the same items in the same order (a min-heap of totally ordered items
pops the same sequence however it is laid out), under a compiler. Each planner
asks once per search, not per push.
"""

from __future__ import annotations

import heapq
from typing import Any

from tensorops._staging import is_compiling

__all__ = ["PythonHeap", "heap_functions"]


def heap_functions() -> Any:
    """``heapq``, or `PythonHeap` while a compiler traces the caller.

    Examples:
        >>> heap = [3, 1, 2]
        >>> heap_functions().heapify(heap)
        >>> heap_functions().heappop(heap)
        1
    """
    return PythonHeap if is_compiling() else heapq


class PythonHeap:
    """``heappush``, ``heappop`` and ``heapify`` in plain Python (a binary min-heap).

    Examples:
        >>> heap = []
        >>> for item in (5, 2, 8, 1):
        ...     PythonHeap.heappush(heap, item)
        >>> [PythonHeap.heappop(heap) for _ in range(4)]
        [1, 2, 5, 8]
    """

    @staticmethod
    def heappush(heap: list[Any], item: Any) -> None:
        """Push `item`, keeping `heap` a heap."""
        heap.append(item)
        i = len(heap) - 1
        while i > 0:
            parent = (i - 1) >> 1
            if not item < heap[parent]:
                break
            heap[i] = heap[parent]
            i = parent
        heap[i] = item

    @staticmethod
    def heappop(heap: list[Any]) -> Any:
        """Pop the smallest item."""
        last = heap.pop()
        if not heap:
            return last
        top = heap[0]
        PythonHeap.sift_down(heap, 0, last)
        return top

    @staticmethod
    def heapify(heap: list[Any]) -> None:
        """Make `heap` a heap, in place."""
        for i in reversed(range(len(heap) // 2)):
            PythonHeap.sift_down(heap, i, heap[i])

    @staticmethod
    def sift_down(heap: list[Any], i: int, item: Any) -> None:
        """Put `item` at `i` and move it down until its children are not smaller."""
        n = len(heap)
        while True:
            child = 2 * i + 1
            if child >= n:
                break
            if child + 1 < n and heap[child + 1] < heap[child]:
                child += 1
            if not heap[child] < item:
                break
            heap[i] = heap[child]
            i = child
        heap[i] = item
