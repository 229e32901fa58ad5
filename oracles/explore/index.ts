/** `kperturb explore`'s oracles: per-step judgements from a sequence's traces (judge.ts, docs/explore.md). */
export {
  judgeExploration,
  judgeSequence,
  healthAlarms,
  leaves,
  operationStepIndex,
  controllerWrittenKeys,
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
export { differentialAlarms, finalState, type DifferentialCase } from './differential.js';
