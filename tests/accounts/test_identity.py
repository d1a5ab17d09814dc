from datetime import timedelta

import pytest
from sqlalchemy import select

from almanac.platform import accounts
from almanac.platform.accounts import EmailVerification, WebSession
from almanac.platform.accounts.secret import secret_hash

PASSWORD = "correct horse battery staple"


def test_sign_up_creates_an_unverified_account_with_an_argon2_hash(db, passwords, clock):
    made = accounts.sign_up(db, "Ada@Example.ORG", PASSWORD, passwords, clock())
    db.commit()
    assert made.account.email == "Ada@example.org"
    assert made.account.email_key == "ada@example.org"
    assert not made.account.verified
    assert made.account.password_hash.startswith("$argon2id$")
    assert PASSWORD not in made.account.password_hash
    stored = db.scalar(select(EmailVerification))
    assert stored.token_hash == secret_hash(made.verification_token)
    assert made.verification_token not in repr(made) + repr(made.account) + repr(stored)


def test_an_address_is_one_account_whatever_its_case(db, passwords, clock):
    accounts.sign_up(db, "ada@example.org", PASSWORD, passwords, clock())
    db.commit()
    with pytest.raises(accounts.Conflict) as refused:
        accounts.sign_up(db, "ADA@example.org", PASSWORD, passwords, clock())
    assert refused.value.code == "ACCOUNT-EXISTS"


@pytest.mark.parametrize("address", ["not-an-address", "a@b", "ada@@example.org", ""])
def test_sign_up_refuses_what_is_not_an_address(db, passwords, clock, address):
    with pytest.raises(accounts.Invalid, match="email"):
        accounts.sign_up(db, address, PASSWORD, passwords, clock())


def test_sign_up_refuses_a_short_password(db, passwords, clock):
    with pytest.raises(accounts.Invalid, match="password"):
        accounts.sign_up(db, "ada@example.org", "short", passwords, clock())


def test_verification_token_verifies_once_and_only_within_24_hours(db, passwords, clock):
    made = accounts.sign_up(db, "ada@example.org", PASSWORD, passwords, clock())
    db.commit()
    account = accounts.verify_email(db, made.verification_token, clock.advance(timedelta(hours=23)))
    db.commit()
    assert account.verified and account.verified_at == clock()
    with pytest.raises(accounts.VerificationInvalid):
        accounts.verify_email(db, made.verification_token, clock())

    late = accounts.issue_verification(db, account, clock())
    db.commit()
    with pytest.raises(accounts.VerificationInvalid):
        accounts.verify_email(db, late, clock.advance(timedelta(hours=24)))
    with pytest.raises(accounts.VerificationInvalid):
        accounts.verify_email(db, "made-up", clock())


def test_authenticate_checks_the_password_and_refuses_alike(db, passwords, clock):
    accounts.sign_up(db, "ada@example.org", PASSWORD, passwords, clock())
    db.commit()
    assert accounts.authenticate(db, "ADA@example.org", PASSWORD, passwords).email_key == (
        "ada@example.org"
    )
    with pytest.raises(accounts.AuthenticationFailed) as wrong:
        accounts.authenticate(db, "ada@example.org", PASSWORD + "!", passwords)
    with pytest.raises(accounts.AuthenticationFailed) as unknown:
        accounts.authenticate(db, "bob@example.org", PASSWORD, passwords)
    with pytest.raises(accounts.AuthenticationFailed):
        accounts.authenticate(db, "no address", PASSWORD, passwords)
    assert str(wrong.value) == str(unknown.value)


def test_sessions_live_14_days_and_end_on_sign_out(db, passwords, clock):
    account = accounts.sign_up(db, "ada@example.org", PASSWORD, passwords, clock()).account
    cookie = accounts.start_session(db, account, clock())
    db.commit()
    assert db.scalar(select(WebSession.token_hash)) == secret_hash(cookie)
    assert accounts.session_account(db, cookie, clock.advance(timedelta(days=13))).id == account.id
    with pytest.raises(accounts.NotAuthenticated):
        accounts.session_account(db, cookie, clock.advance(timedelta(days=1)))

    second = accounts.start_session(db, account, clock())
    accounts.end_session(db, second, clock())
    db.commit()
    with pytest.raises(accounts.NotAuthenticated):
        accounts.session_account(db, second, clock())
    with pytest.raises(accounts.NotAuthenticated):
        accounts.session_account(db, "never-issued", clock())


def test_the_password_is_rehashed_when_the_parameters_grow(db, passwords, clock):
    account = accounts.sign_up(db, "ada@example.org", PASSWORD, passwords, clock()).account
    db.commit()
    stronger = accounts.Passwords(
        accounts.Argon2Parameters(time_cost=2, memory_cost=16, parallelism=1)
    )
    checked = accounts.authenticate(db, "ada@example.org", PASSWORD, stronger)
    assert "t=2" not in checked.password_hash, "checking only reads"
    new_hash = accounts.rehashed_password(checked, PASSWORD, stronger)
    assert new_hash is not None and accounts.rehashed_password(checked, PASSWORD, passwords) is None
    checked.password_hash = new_hash
    db.commit()
    assert "t=2" in account.password_hash
    assert accounts.authenticate(db, "ada@example.org", PASSWORD, stronger).id == account.id
