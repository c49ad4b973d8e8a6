"""The RMA unit (dissertation ch. 7.5): put, get, immediate and notification put, FCAA lock.

So far only the formats (:mod:`rtl.rma.formats`); ``docs/rma.md`` says what is built."""
