/** `kperturb explore`'s oracles: per-step judgements from a sequence's traces (judge.ts, docs/explore.md). */
export {
  judgeExploration,
  judgeSequence,
  healthAlarms,
  leaves,
  operationStepIndex,
  controllerWrittenKeys,
  controllerRefusal,
  stateAfterStep,
  type ExploreAlarm,
  type ExploreOracle,
  type FieldMap,
  type SequenceJudgement,
  type SequenceRun,
  type StepJudgement,
  type StepVerdict,
  type TracedLocation,
} from './judge.js';
export {
  ALLOCATED_AT_CREATION,
  differentialAlarms,
  differentialNotCompared,
  finalState,
  nondeterministicFields,
  objectDifferenceAlarms,
  type DifferentialCase,
} from './differential.js';
export { rollbackAlarms, rollbackCrash, rollbackTargets, type RollbackCase, type RollbackTarget } from './rollback.js';
export {
  alarmStep,
  confirmExploreFinding,
  describeExploreFinding,
  groupExploreFindings,
  type ExploreConfirmation,
  type ExploreFinding,
  type ExploreFindingClass,
} from './findings.js';
