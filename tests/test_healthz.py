import pytest


def test_healthz_answers_without_a_database(client):
    # No django_db mark: any query would fail the test.
    response = client.get("/healthz")
    assert response.status_code == 200 and response.content == b"ok"


@pytest.mark.parametrize("method", ["post", "put", "delete"])
def test_healthz_is_read_only(client, method):
    assert getattr(client, method)("/healthz").status_code == 405
