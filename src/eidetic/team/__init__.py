"""A shared server's members: who may ask (their tokens, ``tokens``) and what a member's write
carries (``attribution``). Between ``session`` (which serves a member) and ``memory``."""
