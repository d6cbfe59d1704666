"""Error types. User errors and infrastructure errors are different types; the
CLI maps each to its exit code and prints the message, nothing else exits."""

from __future__ import annotations


class FarmError(Exception):
    """Base class; ``exit_status`` is what the CLI returns for it."""

    exit_status = 3


class UsageError(FarmError):
    """The user asked for something that cannot be: fix the command line."""

    exit_status = 2


class InfraError(FarmError):
    """The farm could not do its work: a missing tool, a failed build, a full disk."""

    exit_status = 3


class TimedOut(InfraError):
    """A command ran past its limit and was killed with everything it started."""


class ConfigError(InfraError):
    """Kconfig did not keep a requested symbol."""


class BuildError(InfraError):
    """A kernel, module or guest program did not build."""


class GuestError(InfraError):
    """The guest hung, panicked or died; ``excerpt`` holds the console around it.

    ``kernel_fault`` is True when the kernel itself is to blame (a panic, a hang,
    a lockup report): a verdict on the kernel, not a failure of the farm."""

    def __init__(self, message: str, excerpt: str = "", kernel_fault: bool = False) -> None:
        super().__init__(message)
        self.excerpt = excerpt
        self.kernel_fault = kernel_fault
