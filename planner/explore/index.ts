/** `kperturb explore`'s core: the schema model, core-type matching and operation generation (docs/explore.md). */
export { parseSchema, crdVersionSchema, walkNodes, formatNodePath, type SchemaNode, type NodeType } from './schema.js';
export { matchCoreTypes, type CoreTypeMatches } from './k8s-types.js';
export {
  generateExploration,
  shortType,
  MISOPERATION_REPLICAS,
  type ExploreCampaign,
  type ExploreInput,
  type ExploreSequence,
  type ExploreStep,
  type ExploreTarget,
  type OperationKind,
  type PropertyCoverage,
} from './generate.js';
export { SeededRandom, getAt, setAt, mergePatch, isQuantity, doubleQuantity, halveQuantity } from './values.js';
export { fillRequired, minimalValue, FILLER_IMAGE, FILLER_STRING } from './required.js';
export { rollbackSequence, rollbackName, parseRollbackName, type RollbackInput } from './rollback.js';
export { applyCoreRules, CORE_RULES, type CoreFieldRule, type CoreTypeRule } from './core-rules.js';
