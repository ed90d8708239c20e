"""A shared server's members: who may ask (their tokens, ``tokens``), what a member's write
carries (``attribution``), and the log of who changed what (``write_log``). Between ``session``
(which serves a member) and ``memory``."""
