def pytest_configure(config):
    # `make soak` selects these; the default suite (`-m "not soak"`) leaves them out.
    config.addinivalue_line("markers", "soak: long randomized runs, run by `make soak`")
