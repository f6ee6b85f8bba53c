from tests.host_kit import host  # noqa: F401 - the fixture
