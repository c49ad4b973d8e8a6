"""Suite-wide collection order: tests marked ``long_build`` run first.

The default suite runs on two pytest-xdist workers; a test whose design takes minutes to compile
(the 16-port HTAX: about 9 minutes of Verilator on this machine) ends the run late if a worker reaches
it last.  Moving such tests to the front of the (identical, deterministic) collection order lets a
worker start them while the other takes the short tests.
"""


def pytest_collection_modifyitems(session, config, items):
    items.sort(key=lambda item: item.get_closest_marker("long_build") is None)
