"""Shared by the test_constraints modules: each proves the database itself refuses impossible rows."""

import pytest
from django.db import IntegrityError, transaction

from apps.campaigns.models import Club, Scenario


def rejected(write):
    """`write` must fail in the database (an IntegrityError), and its savepoint is rolled back."""
    with pytest.raises(IntegrityError), transaction.atomic():
        write()


@pytest.fixture
def club(db):
    return Club.objects.create(name="Club", slug="club")


@pytest.fixture
def scenario(club):
    return Scenario.objects.create(club=club, name="Scenario")
