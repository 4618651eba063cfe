/**
 * @lightsop/runtime/skills: the registry protocol and the one skills loader, with the bounded
 * reading of workspace files. It imports nothing of the interpreter, so a host that only needs
 * to know what commands a skills file provides (the language server) imports this entry alone.
 */
export {
  isCommandRegistry, isSkillsMap, registryFromSkillsMap, toCommandRegistry,
  type CommandPayload, type JobKey, type ValueRecord, type Responder, type CancelHeuristic, type CommandRegistry, type SkillDefinition, type SkillsMap,
} from './registry';
export {
  loadSkillsFile, isSkillsModule, setModuleImporter, skillsLoadTimeoutMs, DEFAULT_SKILLS_TIMEOUT_MS, SkillsLoadError, SkillsLoadTimeoutError, SkillsTimeoutSettingError,
  type LoadedSkills, type LoadSkillsOptions, type SkillsLoadProblem,
} from './load';
export { MAX_CONFIG_FILE_BYTES, readLimitedTextFile, readLimitedTextFileSync, UnreadableFileError } from './read-limited';
