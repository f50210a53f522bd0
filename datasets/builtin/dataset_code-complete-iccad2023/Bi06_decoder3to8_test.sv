`timescale 1 ps/1 ps
`define OK 12
`define INCORRECT 13

module stimulus_gen (
	input clk,
	output reg en,
	output reg [2:0] sel,
	output reg[511:0] wavedrom_title,
	output reg wavedrom_enable
);

	initial begin
		{en, sel} <= 4'd0;
		wavedrom_enable <= 0;
		wavedrom_title <= "";
		repeat(400) @(negedge clk) begin
			{en, sel} <= {$random, $random};
		end
		#1 $finish;
	end
endmodule

module tb();

	typedef struct packed {
		int errors;
		int errortime;
		int errors_out;
		int errortime_out;

		int clocks;
	} stats;

	stats stats1;

	wire[511:0] wavedrom_title;
	wire wavedrom_enable;

	reg clk=0;
	initial forever
		#5 clk = ~clk;

	logic en;
	logic [2:0] sel;
	logic [7:0] out_ref;
	logic [7:0] out_dut;

	initial begin
		$dumpfile("wave.vcd");
		$dumpvars(1, stim1.clk, tb_mismatch, en, sel, out_ref, out_dut);
	end

	wire tb_match;
	wire tb_mismatch = ~tb_match;

	stimulus_gen stim1 (
		.clk,
		.* );
	RefModule good1 (
		.en, .sel,
		.out(out_ref) );
	TopModule top_module1 (
		.en, .sel,
		.out(out_dut) );

	final begin
		if (stats1.errors_out) $display("Hint: Output '%s' has %0d mismatches. First mismatch occurred at time %0d.", "out", stats1.errors_out, stats1.errortime_out);
		else $display("Hint: Output '%s' has no mismatches.", "out");
		$display("Hint: Total mismatched samples is %1d out of %1d samples\n", stats1.errors, stats1.clocks);
		$display("Simulation finished at %0d ps", $time);
		$display("Mismatches: %1d in %1d samples", stats1.errors, stats1.clocks);
	end

	assign tb_match = ( { out_ref } === ( { out_ref } ^ { out_dut } ^ { out_ref } ) );
	always @(posedge clk, negedge clk) begin
		stats1.clocks++;
		if (!tb_match) begin
			if (stats1.errors == 0) stats1.errortime = $time;
			stats1.errors++;
		end
		if (out_ref !== ( out_ref ^ out_dut ^ out_ref ))
		begin if (stats1.errors_out == 0) stats1.errortime_out = $time;
			stats1.errors_out = stats1.errors_out+1'b1; end
	end

	initial begin
		#1000000
		$display("TIMEOUT");
		$finish();
	end

endmodule
