"""gymview's private helpers, shared by every room: argument checks, the background-thread pattern,
lazy public names, the kernel check, memory trimming, what background runs share, and the user's code
on its way to worker processes. Nothing here imports another gymview room."""
