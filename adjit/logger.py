"""Warp's logging API (``Logger``, ``get_logger``, ``set_logger``,
``ScopedLogger``, ``ScopedLogLevel``, ``LOG_*``) over Python's ``logging``.

adjit reports what it does through the Python loggers under ``"adjit"``
(``adjit.cache``: why a kernel compiles, a damaged cache entry;
``adjit.tape``: a gradient that stops at a launch; ...). This module puts
Warp's names on them:

- The default logger (``get_logger()`` before any ``set_logger``) is the
  Python logger ``"adjit"``: its messages go wherever ``logging`` is
  configured to send them, as adjit's own do.
- ``set_logger(obj)`` sends every record of the ``"adjit"`` loggers to
  ``obj`` instead (``obj.debug/info/warning/error(message)``: Warp's
  ``Logger`` protocol) and stops them propagating to the root logger's
  handlers; ``set_logger(None)`` restores the default.
- The log level is the ``"adjit"`` logger's level: ``ScopedLogLevel(LOG_INFO)``
  lets the "compiling ..." messages through inside its block. Outside any
  scope it is what ``logging`` says (by default the root logger's WARNING).
  ``LOG_DEBUG`` .. ``LOG_ERROR`` are ``logging.DEBUG`` .. ``logging.ERROR``.
"""
from __future__ import annotations

import logging
import os
import threading
from typing import Protocol, runtime_checkable

LOG_DEBUG = logging.DEBUG
LOG_INFO = logging.INFO
LOG_WARNING = logging.WARNING
LOG_ERROR = logging.ERROR

#: The parent of every logger adjit writes to.
ROOT = "adjit"


@runtime_checkable
class Logger(Protocol):
    """What a logger given to ``set_logger`` has (Warp's protocol): any
    object with these four methods."""

    def debug(self, message: str) -> None: ...

    def info(self, message: str) -> None: ...

    def warning(self, message: str, category=None, stacklevel: int = 1) -> None: ...

    def error(self, message: str) -> None: ...


class _PythonLogger:
    """The default logger: the Python logger ``"adjit"``."""

    def __init__(self):
        self.logger = logging.getLogger(ROOT)

    def debug(self, message: str) -> None:
        self.logger.debug(message, stacklevel=2)

    def info(self, message: str) -> None:
        self.logger.info(message, stacklevel=2)

    def warning(self, message: str, category=None, stacklevel: int = 1) -> None:
        # (the record's ``category`` attribute carries a Warp warning category)
        self.logger.warning(message, stacklevel=stacklevel + 1, extra={"category": category})

    def error(self, message: str) -> None:
        self.logger.error(message, stacklevel=2)

    def __repr__(self) -> str:
        return "<adjit default logger: logging.getLogger('adjit')>"


class _ToLogger(logging.Handler):
    """Hands the ``"adjit"`` loggers' records to a Warp-style logger."""

    def __init__(self, target):
        super().__init__()
        self.target = target

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = record.getMessage()
            if record.exc_info:
                message += "\n" + logging.Formatter().formatException(record.exc_info)
            if record.levelno >= logging.ERROR:
                self.target.error(message)
            elif record.levelno >= logging.WARNING:
                self.target.warning(message, getattr(record, "category", None))
            elif record.levelno >= logging.INFO:
                self.target.info(message)
            else:
                self.target.debug(message)
        except Exception:
            self.handleError(record)


_DEFAULT = _PythonLogger()
_lock = threading.Lock()
_active = _DEFAULT


def _lock_after_fork() -> None:
    global _lock
    _lock = threading.Lock()  # another thread may have held it at the fork


os.register_at_fork(after_in_child=_lock_after_fork)
_handler: _ToLogger | None = None
_propagate = True  # the "adjit" logger's propagate flag before a custom logger took over


def _check_logger(logger) -> None:
    missing = [m for m in ("debug", "info", "warning", "error") if not callable(getattr(logger, m, None))]
    if missing:
        raise TypeError(f"a logger must implement Warp's Logger protocol (debug(message), info(message), "
                        f"warning(message, category=None, stacklevel=1), error(message)); {logger!r} has no "
                        f"{', '.join(missing)}")


def get_logger() -> Logger:
    """The active logger: the one given to ``set_logger``, else the default
    (the Python logger ``"adjit"``)."""
    return _active


def set_logger(logger: Logger | None) -> None:
    """Sends adjit's log messages to ``logger`` (an object with Warp's
    ``Logger`` methods), or with None back to the Python logger ``"adjit"``.
    ``TypeError`` for an object without the four methods."""
    global _active, _handler, _propagate
    if logger is not None and logger is not _DEFAULT:
        _check_logger(logger)
    python_logger = logging.getLogger(ROOT)
    with _lock:
        if _handler is not None:
            python_logger.removeHandler(_handler)
            python_logger.propagate = _propagate
            _handler = None
        if logger is None or logger is _DEFAULT:
            _active = _DEFAULT
            return
        _propagate = python_logger.propagate
        _handler = _ToLogger(logger)
        python_logger.addHandler(_handler)
        python_logger.propagate = False
        _active = logger


class ScopedLogger:
    """Installs ``logger`` (or with None the default) for a ``with`` block,
    then restores the logger that was active before."""

    def __init__(self, logger: Logger | None):
        if logger is not None:
            _check_logger(logger)
        self.logger = logger
        self._saved = None

    def __enter__(self) -> "ScopedLogger":
        self._saved = get_logger()
        set_logger(self.logger)
        return self

    def __exit__(self, exc_type, exc_value, traceback) -> None:
        set_logger(self._saved)


class ScopedLogLevel:
    """Sets the level of adjit's log messages (``LOG_DEBUG``, ``LOG_INFO``,
    ``LOG_WARNING``, ``LOG_ERROR``: the ``"adjit"`` Python logger's level)
    for a ``with`` block, then restores the level it had."""

    def __init__(self, log_level: int):
        if isinstance(log_level, bool) or not isinstance(log_level, int):
            raise TypeError(f"ScopedLogLevel: log_level must be an int such as adjit.LOG_INFO, got {log_level!r}")
        if log_level < 0:
            raise ValueError(f"ScopedLogLevel: log_level must be >= 0 (LOG_DEBUG is {LOG_DEBUG}), got {log_level}")
        self.log_level = log_level
        self._saved = None

    def __enter__(self) -> "ScopedLogLevel":
        python_logger = logging.getLogger(ROOT)
        self._saved = python_logger.level
        python_logger.setLevel(self.log_level)
        return self

    def __exit__(self, exc_type, exc_value, traceback) -> None:
        logging.getLogger(ROOT).setLevel(self._saved)
