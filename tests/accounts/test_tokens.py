import pytest
from sqlalchemy import select

from almanac.platform import accounts
from almanac.platform.accounts import ApiToken
from almanac.platform.accounts.secret import secret_hash
from tests.accounts.helpers import person


def test_a_token_is_shown_once_kept_as_its_hash_and_records_its_use(db, passwords, clock):
    ada = person(db, passwords, "ada@example.org", clock())
    new = accounts.create_token(db, ada, "  laptop  ", clock())
    db.commit()
    assert new.secret.startswith("alm_") and len(new.secret) > 40
    assert new.secret not in repr(new)
    stored = db.scalar(select(ApiToken))
    assert stored.name == "laptop"
    assert stored.token_hash == secret_hash(new.secret)
    assert stored.last_used_at is None

    account, token = accounts.token_account(db, new.secret)
    assert token.last_used_at is None, "reading the token records nothing"
    accounts.record_token_use(db, token.id, clock())
    db.commit()
    db.refresh(token)
    assert account.id == ada.id and token.last_used_at == clock()
    assert [t.id for t in accounts.list_tokens(db, ada)] == [stored.id]


def test_a_revoked_token_opens_nothing(db, passwords, clock):
    ada = person(db, passwords, "ada@example.org", clock())
    new = accounts.create_token(db, ada, "ci", clock())
    first = accounts.revoke_token(db, ada, new.token.id, clock()).revoked_at
    db.commit()
    with pytest.raises(accounts.NotAuthenticated):
        accounts.token_account(db, new.secret)
    assert accounts.revoke_token(db, ada, new.token.id, clock()).revoked_at == first
    with pytest.raises(accounts.NotAuthenticated):
        accounts.token_account(db, "alm_never-issued")


def test_nobody_revokes_another_account_s_token(db, passwords, clock):
    ada = person(db, passwords, "ada@example.org", clock())
    bob = person(db, passwords, "bob@example.org", clock())
    new = accounts.create_token(db, ada, "ci", clock())
    db.commit()
    with pytest.raises(accounts.NotFound):
        accounts.revoke_token(db, bob, new.token.id, clock())
    assert accounts.token_account(db, new.secret)[0].id == ada.id
    assert accounts.list_tokens(db, bob) == []


@pytest.mark.parametrize("name", ["", "   ", "x" * 101])
def test_a_token_needs_a_name_of_1_to_100_characters(db, passwords, clock, name):
    ada = person(db, passwords, "ada@example.org", clock())
    with pytest.raises(accounts.Invalid, match="name"):
        accounts.create_token(db, ada, name, clock())
