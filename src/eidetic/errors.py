"""One error type for every failure a user can see.

The CLI turns an :class:`EideticError` into ``error:``/``hint:`` lines or a JSON object on
stderr, and its ``code`` becomes the exit status: 1 for bad input (the user can fix the
command), 2 for the environment (disk, permissions, missing model, unreachable server).
"""

from __future__ import annotations

USER_ERROR = 1
ENV_ERROR = 2


class EideticError(Exception):
    """A failure with an exit code, a message and a remediation hint."""

    def __init__(self, message: str, remediation: str = "", code: int = USER_ERROR) -> None:
        super().__init__(message)
        self.message = message
        self.remediation = remediation
        self.code = code

    def to_dict(self) -> dict[str, object]:
        return {"code": self.code, "message": self.message, "remediation": self.remediation}


def user_error(message: str, remediation: str = "") -> EideticError:
    return EideticError(message, remediation, USER_ERROR)


def env_error(message: str, remediation: str = "") -> EideticError:
    return EideticError(message, remediation, ENV_ERROR)
