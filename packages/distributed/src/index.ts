/**
 * @lightsop/distributed: LightSOPLang plans on many machines, on BullMQ and Redis. Workers host
 * skills and run jobs; `openRemoteRegistry` is the executor a local Interpreter uses to send each
 * command to them; `runBatch` runs one plan over many inputs. Only the CLI's worker, batch and
 * `run --redis` paths load this package: core, runtime, the language server and the editor never do.
 */
export { startWorker, type WorkerOptions, type WorkerHandle } from './worker';
export { openRemoteRegistry, NoWorkersError, type RemoteRegistry, type RemoteRegistryOptions } from './remote-registry';
export { runBatch, PlanCommandsError, type BatchOptions, type BatchSummary } from './batch';
export { BatchFileError } from './batch-files';
export { formatProgress, formatEta, type ProgressState } from './progress';
export { parseRedisUrl, DistributedUsageError, RedisUnavailableError, type RedisTarget } from './redis';
export { DEFAULT_QUEUE, checkQueueName, type WorkerInfo, type PlanOutcome } from './protocol';
