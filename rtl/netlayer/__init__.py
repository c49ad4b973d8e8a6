"""A node's network layer: crossbar, link ports, network port (dissertation ch. 7.3); see
``docs/network.md``."""

from .node import NetworkLayer, PhySignature

__all__ = ["NetworkLayer", "PhySignature"]
