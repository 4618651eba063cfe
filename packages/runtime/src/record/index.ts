/** Run records (docs/run-records.md): the format, the recorder, the reader and replay. */
export {
  RUN_RECORD_SCHEMA, RUN_RECORD_VERSION, callKey, sha256, toRecordedData, type JsonValue, type RecordedMessage, type RecordedOutcome,
  type RecordedStatus, type RecordedUsage, type RunRecordLine, type RunHeaderLine, type CommandStartLine, type CommandEndLine,
  type VariableLine, type ModelRequestLine, type ModelResponseLine, type PlanGeneratedLine, type RunEndLine,
} from './format';
export { RunRecorder, openRecordFile, promptMessages, recordedOutcome, type RecordSink, type RunRecorderOptions, type RecordStart } from './recorder';
export {
  RunRecordError, answerWith, outcomeFields, parseRunRecord, recordedVariables, replayFromRecord, type Replay, type ReplayMiss, type RunRecord,
} from './replay';
