// The kvbill subcommands. Each takes the arguments after its name and
// returns the process exit status: 0 success, 1 a check that failed (e.g. a
// model that does not fit, a broken budget), 2 bad input. Each prints its
// own --help. main.cc holds the table that maps names to these functions.
#ifndef KVBILL_CLI_COMMANDS_H_
#define KVBILL_CLI_COMMANDS_H_

#include <string>
#include <vector>

namespace kvbill::cli {

using Args = std::vector<std::string>;

int RunKv(const Args& args);
int RunFit(const Args& args);
int RunPlot(const Args& args);
int RunModels(const Args& args);
int RunGpus(const Args& args);
int RunTrace(const Args& args);
int RunSimulate(const Args& args);
int RunBill(const Args& args);
int RunSweepCommand(const Args& args);
int RunMerge(const Args& args);
int RunPlan(const Args& args);
int RunCheck(const Args& args);
int RunCompare(const Args& args);
int RunReportCommand(const Args& args);
int RunBreakeven(const Args& args);
int RunWhatif(const Args& args);
int RunCalibrate(const Args& args);
int RunScenarioCommand(const Args& args);

}  // namespace kvbill::cli

#endif  // KVBILL_CLI_COMMANDS_H_
