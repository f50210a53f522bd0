`timescale 1 ps/1 ps
`define OK 12
`define INCORRECT 13

module stimulus_gen (
	input clk,
	output reg [7:0] in_,
	output reg[511:0] wavedrom_title,
	output reg wavedrom_enable
);

	initial begin
		{in_} <= 8'd0;
		wavedrom_enable <= 0;
		wavedrom_title <= "";
		repeat(400) @(negedge clk) begin
			{in_} <= {$random, $random};
		end
		#1 $finish;
	end
endmodule

module tb();

	typedef struct packed {
		int errors;
		int errortime;
		int errors_pos;
		int errortime_pos;
		int errors_valid;
		int errortime_valid;

		int clocks;
	} stats;

	stats stats1;

	wire[511:0] wavedrom_title;
	wire wavedrom_enable;

	reg clk=0;
	initial forever
		#5 clk = ~clk;

	logic [7:0] in_;
	logic [2:0] pos_ref;
	logic [2:0] pos_dut;
	logic valid_ref;
	logic valid_dut;

	initial begin
		$dumpfile("wave.vcd");
		$dumpvars(1, stim1.clk, tb_mismatch, in_, pos_ref, pos_dut, valid_ref, valid_dut);
	end

	wire tb_match;
	wire tb_mismatch = ~tb_match;

	stimulus_gen stim1 (
		.clk,
		.* );
	RefModule good1 (
		.in_,
		.pos(pos_ref), .valid(valid_ref) );
	TopModule top_module1 (
		.in_,
		.pos(pos_dut), .valid(valid_dut) );

	final begin
		if (stats1.errors_pos) $display("Hint: Output '%s' has %0d mismatches. First mismatch occurred at time %0d.", "pos", stats1.errors_pos, stats1.errortime_pos);
		else $display("Hint: Output '%s' has no mismatches.", "pos");
		if (stats1.errors_valid) $display("Hint: Output '%s' has %0d mismatches. First mismatch occurred at time %0d.", "valid", stats1.errors_valid, stats1.errortime_valid);
		else $display("Hint: Output '%s' has no mismatches.", "valid");
		$display("Hint: Total mismatched samples is %1d out of %1d samples\n", stats1.errors, stats1.clocks);
		$display("Simulation finished at %0d ps", $time);
		$display("Mismatches: %1d in %1d samples", stats1.errors, stats1.clocks);
	end

	assign tb_match = ( { pos_ref, valid_ref } === ( { pos_ref, valid_ref } ^ { pos_dut, valid_dut } ^ { pos_ref, valid_ref } ) );
	always @(posedge clk, negedge clk) begin
		stats1.clocks++;
		if (!tb_match) begin
			if (stats1.errors == 0) stats1.errortime = $time;
			stats1.errors++;
		end
		if (pos_ref !== ( pos_ref ^ pos_dut ^ pos_ref ))
		begin if (stats1.errors_pos == 0) stats1.errortime_pos = $time;
			stats1.errors_pos = stats1.errors_pos+1'b1; end
		if (valid_ref !== ( valid_ref ^ valid_dut ^ valid_ref ))
		begin if (stats1.errors_valid == 0) stats1.errortime_valid = $time;
			stats1.errors_valid = stats1.errors_valid+1'b1; end
	end

	initial begin
		#1000000
		$display("TIMEOUT");
		$finish();
	end

endmodule
