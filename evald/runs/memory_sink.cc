#include "evald/runs/memory_sink.h"

namespace evald {

void MemorySink::Graded(v1::StoredSample* sample, GradeOutcome& outcome) {
  // Outside a daemon a sandbox fault is the sample's verdict ('!'): nothing resumes it later.
  if (outcome.fault) sample->set_graded(true);
  const int formal = sample->result().has_formal() ? ++formal_ : formal_.load();
  const int done = ++graded_;
  if (progress_) progress_({RunPhase::kGrading, done, total_, formal});
}

}  // namespace evald
