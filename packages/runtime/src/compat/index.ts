/**
 * @lightsop/runtime/compat: a drop-in replacement for AchillesAgentLib's `lightSOPLang` module.
 * Same exports, constructor forms, members and error texts; the semantics are this runtime's
 * (dataflow scheduling, all-or-nothing updates and the fixes of spec section 9).
 *
 *   - import LightSOPLangInterpreter from 'achillesAgentLib/lightSOPLang/index.mjs';
 *   + import LightSOPLangInterpreter from '@lightsop/runtime/compat';
 */
import { LightSOPLangInterpreter } from './interpreter';

export { LightSOPLangInterpreter };
export default LightSOPLangInterpreter;
export { DefaultExecutionMonitor, type ExecutionMonitor, type MonitorLimits } from '../monitor';
export { cancelHeuristic as cancelEuristic } from '../cancel-heuristic';
export { parseCode, type ArgumentDescriptor, type DeclarationRecord } from './parse';
export { createSuccessValue, createFailValue, createUndefinedValue, type LightSOPLangValue } from './values';
export { LightSOPLangVariable, VariablesView } from './variables';
export type {
  LightSOPLangAgent, LightSOPLangOptions, LightSOPLangPayload, LightSOPLangRegistry, LightSOPLangResponder, OnFail, UpdateMetadata,
} from './interpreter';
export type { CancelHeuristic } from '../skills/registry';
export type { Failure, PlanGeneratedEvent } from '../interpreter';
