"""Planning contraction paths.

The cost model, the planners (optimal, dp, greedy, auto, hyper, partition), slicing
under a memory limit, plans kept across processes, the path optimizer for other tools,
and the progress bars and pictures of long searches.
"""
