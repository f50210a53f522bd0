#include "evald/cli/plan_command.h"

#include <spdlog/spdlog.h>

#include <iostream>
#include <memory>

#include "evald/cli/report_io.h"
#include "evald/metrics/power_plan.h"
#include "evald/proto/json.h"
#include "evald/text/report_printer.h"

namespace evald {

namespace {

struct PlanFlags {
  std::string report, report_b, data, json;
  double pass_at_1 = -1, delta = 0, alpha = 0.05, power = 0.8, tau = -1, logit_sd = 2.5;
  int problems = 0, n = 0, simulations = 2000;
};

int RunPlan(const PlanFlags& f) {
  PlanInputs in;
  v1::EvalReport a, b;
  if (!f.report.empty()) {
    auto r = LoadReport(f.report, {f.data});
    if (!r.ok()) return Fail(r.status());
    a = std::move(*r);
    in.a = &a;
  }
  if (!f.report_b.empty()) {
    if (!in.a) return Fail(Status::InvalidArgument("--report-b needs --report"));
    auto r = LoadReport(f.report_b, {f.data});
    if (!r.ok()) return Fail(r.status());
    b = std::move(*r);
    in.b = &b;
  }
  in.pass_at_1 = f.pass_at_1;
  in.problems = f.problems;
  in.delta = f.delta;
  in.alpha = f.alpha;
  in.power = f.power;
  if (f.tau >= 0) in.tau = f.tau;
  in.n = f.n;
  in.simulations = f.simulations;
  in.logit_sd = f.logit_sd;
  auto plan = MakePowerPlan(in);
  if (!plan.ok()) return Fail(plan.status());
  PrintPowerPlan(*plan, std::cout);
  if (!f.json.empty()) {
    if (Status st = WriteJson(*plan, f.json); !st.ok()) return Fail(st);
  }
  return 0;
}

}  // namespace

void RegisterPlanCommand(CLI::App& app, std::function<int()>* run) {
  auto f = std::make_shared<PlanFlags>();
  auto* cmd = app.add_subcommand(
      "plan",
      "samples per problem needed to detect a difference in pass@1, and the smallest "
      "difference an evaluation can detect");
  cmd->add_option("--report", f->report,
                  "the baseline: a report JSON (or a run id with --data); its per-problem rates");
  cmd->add_option("--report-b", f->report_b,
                  "the other checkpoint's report: tau and the default --delta from the pair");
  cmd->add_option("--data", f->data,
                  "daemon store to read run ids from (also while the daemon runs)");
  cmd->add_option("--pass-at-1", f->pass_at_1, "a hypothetical baseline pass@1 (no report)");
  cmd->add_option("--problems", f->problems, "problems of the hypothetical baseline");
  cmd->add_option("--delta", f->delta, "the difference in pass@1 to detect");
  cmd->add_option("--alpha", f->alpha, "two-sided significance level (default 0.05)");
  cmd->add_option("--power", f->power, "power (default 0.8)");
  cmd->add_option("--tau", f->tau,
                  "SD of the true per-problem differences (default: from --report-b, else 0.15)");
  cmd->add_option("--n", f->n, "evaluation size for the MDE (default: the report's n, else 20)");
  cmd->add_option("--simulations", f->simulations, "simulated evaluations per check (0: none)");
  cmd->add_option("--logit-sd", f->logit_sd,
                  "spread of the hypothetical per-problem rates on the logit scale (2.5)");
  cmd->add_option("--json", f->json, "write the plan as JSON");
  cmd->callback([f, run] { *run = [f] { return RunPlan(*f); }; });
}

}  // namespace evald
