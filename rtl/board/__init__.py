"""Board blocks: what stands for the host on an FPGA board without a CPU (the ECP5-5G Evaluation
Board): a UART (:class:`UartRx`, :class:`UartTx`), the UART bridge that carries the host CPU's stores
and reads from a PC (:class:`UartBridge`, protocol in :mod:`.formats`) and block RAM host memory
behind the NIC's DMA port (:class:`HostMemory`).  A board top joins them to ``NicAxi`` with
:func:`wire_axi`::

    wire_axi(m, nic, "m_axi", memory, "s_axi")      # the NIC's DMA into host memory
    wire_axi(m, bridge, "m_axi", nic, "s_axi")      # the PC's stores and reads into the device window
    wiring.connect(m, bridge.mem_req, memory.word_req)
    wiring.connect(m, memory.word_rsp, bridge.mem_rsp)
    wiring.connect(m, rx.o, bridge.i)
    wiring.connect(m, bridge.o, tx.i)
"""

from rtl.common.axi import wire_axi

from .host_memory import HostMemory
from .phy_regs import PhyRegs
from .uart import UartRx, UartTx
from .uart_bridge import UartBridge
from .word_split import WordSplit

__all__ = ["UartRx", "UartTx", "HostMemory", "UartBridge", "WordSplit", "PhyRegs", "wire_axi"]
