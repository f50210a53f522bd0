`timescale 1 ps/1 ps
`define OK 12
`define INCORRECT 13

module stimulus_gen (
	input clk,
	output reg reset,
	output reg valid,
	output reg [7:0] in_,
	output reg[511:0] wavedrom_title,
	output reg wavedrom_enable
);

	initial begin
		{reset, valid, in_} <= 10'd0;
		wavedrom_enable <= 0;
		wavedrom_title <= "";
		reset <= 1;
		repeat(3) @(negedge clk);
		repeat(400) @(negedge clk) begin
			{reset, valid, in_} <= {$random, $random};
			reset <= ($random & 31) == 0;
			valid <= $random;
		end
		#1 $finish;
	end
endmodule

module tb();

	typedef struct packed {
		int errors;
		int errortime;
		int errors_sum;
		int errortime_sum;

		int clocks;
	} stats;

	stats stats1;

	wire[511:0] wavedrom_title;
	wire wavedrom_enable;

	reg clk=0;
	initial forever
		#5 clk = ~clk;

	logic reset;
	logic valid;
	logic [7:0] in_;
	logic [15:0] sum_ref;
	logic [15:0] sum_dut;

	initial begin
		$dumpfile("wave.vcd");
		$dumpvars(1, stim1.clk, tb_mismatch, reset, valid, in_, sum_ref, sum_dut);
	end

	wire tb_match;
	wire tb_mismatch = ~tb_match;

	stimulus_gen stim1 (
		.clk,
		.* );
	RefModule good1 (
		.clk, .reset, .valid, .in_,
		.sum(sum_ref) );
	TopModule top_module1 (
		.clk, .reset, .valid, .in_,
		.sum(sum_dut) );

	final begin
		if (stats1.errors_sum) $display("Hint: Output '%s' has %0d mismatches. First mismatch occurred at time %0d.", "sum", stats1.errors_sum, stats1.errortime_sum);
		else $display("Hint: Output '%s' has no mismatches.", "sum");
		$display("Hint: Total mismatched samples is %1d out of %1d samples\n", stats1.errors, stats1.clocks);
		$display("Simulation finished at %0d ps", $time);
		$display("Mismatches: %1d in %1d samples", stats1.errors, stats1.clocks);
	end

	assign tb_match = ( { sum_ref } === ( { sum_ref } ^ { sum_dut } ^ { sum_ref } ) );
	always @(posedge clk, negedge clk) begin
		stats1.clocks++;
		if (!tb_match) begin
			if (stats1.errors == 0) stats1.errortime = $time;
			stats1.errors++;
		end
		if (sum_ref !== ( sum_ref ^ sum_dut ^ sum_ref ))
		begin if (stats1.errors_sum == 0) stats1.errortime_sum = $time;
			stats1.errors_sum = stats1.errors_sum+1'b1; end
	end

	initial begin
		#1000000
		$display("TIMEOUT");
		$finish();
	end

endmodule
