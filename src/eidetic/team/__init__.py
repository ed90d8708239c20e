"""A shared server's members: who may call it, and the log of who changed what."""
