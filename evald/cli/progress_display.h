// A run's progress as the user sees it (evald eval, evald run): on a terminal one line redrawn
// in place with a bar, the phase, the count and, once grading has started, the rate and the time
// left; in a log, a line when a phase starts, every ten seconds, and when it ends.
#pragma once

#include "evald/runs/run_progress.h"

namespace evald {

// `terminal`: draw a bar (stderr is a terminal); else log lines.
ProgressFn MakeProgressDisplay(bool terminal);

}  // namespace evald
