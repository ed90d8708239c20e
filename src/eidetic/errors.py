"""One error type for every failure a user can see.

The CLI turns an :class:`EideticError` into ``error:``/``hint:`` lines or a JSON object on
stderr, and its ``code`` becomes the exit status: 1 for bad input (the user can fix the
command), 2 for the environment (disk, permissions, missing model, unreachable server).

An error about one option (:func:`option_error`) names it the way the Python API does
(``top_k``); each interface spells it its own way with :meth:`EideticError.spelled` (the CLI
says ``--top-k``, the MCP server ``"top_k": 5``), so no interface shows another's names. So does
an error a caller may override knowingly (:func:`overridable`): its hint names the switch.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

USER_ERROR = 1
ENV_ERROR = 2


class EideticError(Exception):
    """A failure with an exit code, a message and a remediation hint."""

    def __init__(self, message: str, remediation: str = "", code: int = USER_ERROR) -> None:
        super().__init__(message)
        self.message = message
        self.remediation = remediation
        self.code = code
        self.option: str | None = None  # set by option_error
        self._parts: tuple[str, str, Any] = ("", "", None)
        self.override: str | None = None  # set by overridable: the switch its hint names

    def to_dict(self) -> dict[str, object]:
        return {"code": self.code, "message": self.message, "remediation": self.remediation}

    def spelled(self, name: Callable[[str], str], example: Callable[[str, Any], str]) -> EideticError:
        """This error with its option named by ``name(option)`` and its example value shown by
        ``example(option, value)``; an error about no option comes back as it is."""
        if self.override is not None:
            switch = python_example(self.override, True)
            return EideticError(self.message, self.remediation.replace(switch, example(self.override, True)), self.code)
        if self.option is None:
            return self
        return _about(self.option, *self._parts, name(self.option), example)


def user_error(message: str, remediation: str = "") -> EideticError:
    return EideticError(message, remediation, USER_ERROR)


def env_error(message: str, remediation: str = "") -> EideticError:
    return EideticError(message, remediation, ENV_ERROR)


def unknown_backend(name: str, backends: tuple[str, ...]) -> EideticError:
    """A backend eidetic does not offer; ``mongo`` is told why (docs/graph-backend.md)."""
    if name.lower() in ("mongo", "mongodb"):
        return user_error(
            "the mongo backend is not offered: no real MongoDB server can be run where eidetic is tested, "
            "and a backend not tested against a real server is not shipped",
            "use postgres for a team server, neo4j for a graph server, sqlite for one large private store",
        )
    return user_error(f"unknown backend {name!r}", "available backends: " + ", ".join(backends))


def option_error(option: str, problem: str, advice: str = "", example: Any = None) -> EideticError:
    """Bad input to one option (a :class:`~eidetic.query.RecallQuery` field name): the message is
    the option's name then ``problem``; the hint is ``advice`` then, if given, a good value."""
    return _about(option, problem, advice, example, option, python_example)


def overridable(message: str, advice: str, switch: str) -> EideticError:
    """Input refused unless the caller says it knows (``switch``, a boolean option of the Python
    API, e.g. ``allow_secrets``): the hint gives ``advice``, then the switch as each interface
    spells it (``--allow-secrets``, ``"allow_secrets": true``)."""
    error = user_error(message, f"{advice}; to go ahead knowingly: {python_example(switch, True)}")
    error.override = switch
    return error


def python_example(option: str, value: Any) -> str:
    """An option as a Python keyword: ``top_k=5``."""
    return f"{option}={value!r}"


def _about(
    option: str, problem: str, advice: str, value: Any, name: str, example: Callable[[str, Any], str]
) -> EideticError:
    shown = f"e.g. {example(option, value)}" if value is not None else ""
    error = user_error(f"{name} {problem}", ", ".join(part for part in (advice, shown) if part))
    error.option, error._parts = option, (problem, advice, value)
    return error


def close_matches(word: str, known: Iterable[str], n: int = 3) -> list[str]:
    """The known words ``word`` is most likely a typo or a shortening of, best first, case
    aside: those it begins (``m-6e13``, a hash cut short), then difflib's closest (a ratio of 0.6
    or more). What a "did you mean" offers."""
    import difflib  # only on the way to an error: keeps the CLI's start fast
    import heapq

    by_lower: dict[str, str] = {}
    for item in known:
        by_lower.setdefault(item.lower(), item)
    lower = word.lower()
    begun = sorted(k for k in by_lower if k.startswith(lower) and k != lower) if len(lower) >= MIN_PREFIX else []
    pool = list(by_lower)
    if len(pool) > NARROWED:  # difflib compares every word in full: first keep those sharing most letter pairs
        pairs = _pairs(lower)
        pool = heapq.nlargest(NARROWED, pool, key=lambda known_word: len(pairs & _pairs(known_word)))
    near = difflib.get_close_matches(lower, pool, n=n)
    return [by_lower[m] for m in dict.fromkeys([*begun[:n], *near])][:n]


MIN_PREFIX = 4  # the shortest word taken as the start of a longer one
NARROWED = 200  # the most words difflib compares (~0.1 ms each: 20,000 would take 2 s)


def _pairs(text: str) -> set[str]:
    return {text[i : i + 2] for i in range(len(text) - 1)}


def did_you_mean(word: str, known: Iterable[str], spell: Callable[[str], str] = repr) -> str:
    """``did you mean 'recall'?`` (or ``'a' or 'b'``) for the close matches of ``word``; "" for none."""
    near = close_matches(word, known)
    return f"did you mean {' or '.join(spell(m) for m in near)}?" if near else ""
