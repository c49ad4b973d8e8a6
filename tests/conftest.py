"""Suite-wide collection order: tests marked ``long_build`` run first.

The default suite runs on two pytest-xdist workers; a test whose design takes minutes to compile
or to run (the 8- and 16-port HTAX, the ATU on the pipelined switch: 2-4 minutes each on this
machine) ends the run late if a worker reaches it last.  Moving such tests to
the front of the (identical, deterministic) collection order lets the workers start them while the
short tests fill the gaps.
"""


def pytest_collection_modifyitems(session, config, items):
    items.sort(key=lambda item: item.get_closest_marker("long_build") is None)
