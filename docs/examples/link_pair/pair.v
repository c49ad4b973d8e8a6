// Two link ports back to back through one register stage each way.  The test sends on a's VC 0 and
// receives on b's VC 0; every other input is tied off: the other VCs idle, their consumers ready.
module pair(input clk, input rst, input [15:0] replay_timeout, input [3:0] max_replays,
            input a_tx0_valid, input [67:0] a_tx0_payload, output a_tx0_ready,
            output b_rx0_valid, output [67:0] b_rx0_payload, input b_rx0_ready,
            output [15:0] b_crc_errors, output [15:0] b_malformed);
  wire [15:0] a_phit, b_phit;
  wire [1:0] a_ctl, b_ctl;
  reg [15:0] a_phit_q = 0, b_phit_q = 0;
  reg [1:0] a_ctl_q = 0, b_ctl_q = 0;
  always @(posedge clk) begin
    a_phit_q <= a_phit; a_ctl_q <= a_ctl; b_phit_q <= b_phit; b_ctl_q <= b_ctl;
  end
  link a(.clk(clk), .rst(rst), .replay_timeout(replay_timeout), .max_replays(max_replays), .retrain(1'b0),
         .tx__0__valid(a_tx0_valid), .tx__0__payload(a_tx0_payload), .tx__0__ready(a_tx0_ready),
         .tx__1__valid(1'b0), .tx__1__payload(68'd0), .tx__2__valid(1'b0), .tx__2__payload(68'd0),
         .tx__3__valid(1'b0), .tx__3__payload(68'd0),
         .rx__0__ready(1'b1), .rx__1__ready(1'b1), .rx__2__ready(1'b1), .rx__3__ready(1'b1),
         .tx_phit(a_phit), .tx_ctl(a_ctl), .rx_phit(b_phit_q), .rx_ctl(b_ctl_q));
  link b(.clk(clk), .rst(rst), .replay_timeout(replay_timeout), .max_replays(max_replays), .retrain(1'b0),
         .tx__0__valid(1'b0), .tx__0__payload(68'd0), .tx__1__valid(1'b0), .tx__1__payload(68'd0),
         .tx__2__valid(1'b0), .tx__2__payload(68'd0), .tx__3__valid(1'b0), .tx__3__payload(68'd0),
         .rx__0__valid(b_rx0_valid), .rx__0__payload(b_rx0_payload), .rx__0__ready(b_rx0_ready),
         .rx__1__ready(1'b1), .rx__2__ready(1'b1), .rx__3__ready(1'b1),
         .tx_phit(b_phit), .tx_ctl(b_ctl), .rx_phit(a_phit_q), .rx_ctl(a_ctl_q),
         .crc_errors(b_crc_errors), .malformed_packets(b_malformed));
endmodule
