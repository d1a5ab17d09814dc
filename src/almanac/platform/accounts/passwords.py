"""Password hashing with argon2id (argon2-cffi); parameters are settings, tests use fast ones."""

from __future__ import annotations

from dataclasses import dataclass

from argon2 import PasswordHasher as _Argon2
from argon2.exceptions import InvalidHashError, VerificationError

from almanac.platform.errors import Invalid

MIN_PASSWORD_LENGTH = 10
MAX_PASSWORD_LENGTH = 1024


@dataclass(frozen=True, slots=True)
class Argon2Parameters:
    """argon2id cost: the defaults are argon2-cffi's RFC 9106 low-memory profile."""

    time_cost: int = 3
    memory_cost: int = 65536
    parallelism: int = 4

    @classmethod
    def fast(cls) -> Argon2Parameters:
        """Cheap parameters for test suites only: never for stored production passwords."""
        return cls(time_cost=1, memory_cost=8, parallelism=1)


class Passwords:
    """Hashes and checks passwords; never logs, stores or returns the password itself."""

    def __init__(self, parameters: Argon2Parameters | None = None) -> None:
        p = parameters or Argon2Parameters()
        self._hasher = _Argon2(
            time_cost=p.time_cost, memory_cost=p.memory_cost, parallelism=p.parallelism
        )
        self._dummy = self._hasher.hash("almanac-dummy-password")

    def __repr__(self) -> str:
        return "Passwords(argon2id)"

    def hash(self, password: str) -> str:
        check_password_rules(password)
        return self._hasher.hash(password)

    def verify(self, stored_hash: str | None, password: str) -> bool:
        """True when `password` matches; with no stored hash a dummy is checked so that an
        unknown address takes as long as a wrong password."""
        try:
            return self._hasher.verify(stored_hash or self._dummy, password) and bool(stored_hash)
        except (VerificationError, InvalidHashError):
            return False

    def needs_rehash(self, stored_hash: str) -> bool:
        return self._hasher.check_needs_rehash(stored_hash)


def check_password_rules(password: str) -> None:
    """A password has 10 to 1024 characters (NIST SP 800-63B: length, no composition rules)."""
    if not MIN_PASSWORD_LENGTH <= len(password) <= MAX_PASSWORD_LENGTH:
        raise Invalid(
            f"password must have {MIN_PASSWORD_LENGTH} to {MAX_PASSWORD_LENGTH} characters"
        )
