"""The SerDes PHY of a link port on the ECP5-5G (issue 47): ``docs/phy.md``."""

from .crossing import PhitCrossing, Snapshot
from .dcu import DcuSci, Ecp5Dcu
from .lane import D16_2, K27_7, K28_0, K28_5, K29_7, LineWord, Phit, RxWord, SerdesLaneSignature
from .line import ByteAligner, LineDecoder, LineEncoder
from .phy import PhyMode, PhyRx, PhyTx, RxCounters, SerdesPhy, TxCounters
from .prbs import PrbsChecker, PrbsGenerator, PrbsPattern
from .reset import SerdesReset

__all__ = ["Phit", "LineWord", "RxWord", "SerdesLaneSignature", "K28_5", "K27_7", "K29_7", "K28_0", "D16_2",
           "LineEncoder", "ByteAligner", "LineDecoder", "PhitCrossing", "Snapshot", "SerdesReset",
           "PrbsPattern", "PrbsGenerator", "PrbsChecker", "PhyMode", "PhyTx", "PhyRx", "SerdesPhy",
           "TxCounters", "RxCounters", "Ecp5Dcu", "DcuSci"]
